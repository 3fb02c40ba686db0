//! The MPI transport (rsmpi), in `--features mpi` builds only.
//!
//! MPI is started only when a launcher started this process (`mpirun`, `mpiexec`, `srun`):
//! their environment variables say so. A plain `icnlab sweep` of an MPI build therefore never
//! touches MPI (OpenMPI's singleton start forks a helper daemon, which some machines refuse),
//! and a one-rank world is finalized at once and runs the one-process path unchanged.
//! Only the main thread calls MPI (the rayon workers never do): `Threading::Funneled`.

use super::driver::Comm;
use ::mpi::datatype::PartitionMut;
use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use icn_engine::lockstep::Exchange;
use std::sync::Arc;
use std::thread::ThreadId;

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

impl World {
    /// The ranks as the transport of one network spread over them (`--spread network`).
    pub fn network(&self) -> Arc<dyn Exchange> {
        Arc::new(Network {
            rank: self.rank(),
            size: self.size(),
            main: std::thread::current().id(),
        })
    }
}

/// [`Exchange`] over `MPI_COMM_WORLD`. It keeps no communicator handle (rsmpi's are not
/// `Send`), only the thread that started MPI: with `Threading::Funneled` only that thread may
/// call MPI, and it is the one that runs the spread model's cycles (the partitions' worker
/// threads never exchange anything themselves).
struct Network {
    rank: usize,
    size: usize,
    main: ThreadId,
}

impl Exchange for Network {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    /// `MPI_Allgather` of the byte counts, then `MPI_Allgatherv` of the bytes.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        assert_eq!(
            std::thread::current().id(),
            self.main,
            "MPI is called from the thread that started it only (Threading::Funneled)"
        );
        let world = SimpleCommunicator::world();
        let count =
            i32::try_from(mine.len()).expect("a rank's bytes of one exchange fit an MPI count");
        let mut counts = vec![0i32; self.size];
        world.all_gather_into(&count, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |next, &c| {
                let at = *next;
                *next = next
                    .checked_add(c)
                    .expect("one exchange's bytes fit an MPI count");
                Some(at)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            world.all_gather_varcount_into(mine, &mut into);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}
