//! The MPI transport (rsmpi), in `--features mpi` builds only.
//!
//! MPI is started only when a launcher started this process (`mpirun`, `mpiexec`, `srun`):
//! their environment variables say so. A plain `icnlab sweep` of an MPI build therefore never
//! touches MPI (OpenMPI's singleton start forks a helper daemon, which some machines refuse),
//! and a one-rank world is finalized at once and runs the one-process path unchanged.
//! Only the main thread calls MPI (the rayon workers never do): `Threading::Funneled`.

use super::driver::Comm;
use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

/// Variables a launcher sets in every process it starts: OpenMPI's `mpirun`, PMIx (OpenMPI 4+,
/// `srun --mpi=pmix`), PMI-1/2 (MPICH's hydra, `srun --mpi=pmi2`).
const LAUNCHER_VARS: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"];

pub fn launched() -> bool {
    LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some())
}

/// An MPI world of two ranks or more; MPI is finalized when it drops.
pub struct World {
    world: SimpleCommunicator,
    /// Dropped last: finalizes MPI.
    _universe: Universe,
}

impl World {
    /// `Ok(None)` when not launched by an MPI launcher, or launched as a single rank (MPI is
    /// then finalized before returning, and the caller runs as one process).
    pub fn start() -> Result<Option<World>, String> {
        if !launched() {
            return Ok(None);
        }
        let (universe, _) = ::mpi::initialize_with_threading(::mpi::Threading::Funneled)
            .ok_or("MPI was already initialized")?;
        let world = universe.world();
        if world.size() < 2 {
            return Ok(None);
        }
        Ok(Some(World {
            world,
            _universe: universe,
        }))
    }
}

impl Comm for World {
    fn rank(&self) -> usize {
        usize::try_from(self.world.rank()).expect("MPI ranks are not negative")
    }

    fn size(&self) -> usize {
        usize::try_from(self.world.size()).expect("MPI sizes are positive")
    }

    fn send_to_root(&self, bytes: &[u8]) {
        self.world.process_at_rank(0).send(bytes);
    }

    fn receive_from(&self, from: usize) -> Vec<u8> {
        let from = i32::try_from(from).expect("ranks fit in an MPI int");
        self.world.process_at_rank(from).receive_vec::<u8>().0
    }

    fn broadcast_code(&self, code: &mut u8) {
        self.world.process_at_rank(0).broadcast_into(code);
    }
}
