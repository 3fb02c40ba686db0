//! The speed workloads of the cluster model (`icnlab bench cluster`): CCCBrd broadcast of
//! 64 KB on CCC(5,5) (160 nodes) over X-Switches, and an all-to-all of 4 KB on an 8×8 mesh of
//! VC routers (4 032 messages), both with X-NIA-like simple endpoints, in messages delivered;
//! and the 32-rank TI replay beside SimGrid's (`ti32`), in actions replayed.

use crate::model::{BcastAlgorithm, Cluster, ClusterConfig, FabricConfig, WorkloadKind};
use crate::nic::NicKind;
use icn_engine::model::NoProgress;
use icn_engine::{Model, ModelError};
use icn_router::VcParams;
use icn_router::fabric_config::VcFabricConfig;
use icn_router::vc_net::VcNetConfig;
use icn_thnet::fabric_config::XSwitchFabricConfig;
use icn_thnet::xswitch_net::XSwitchNetConfig;

mod ti32;

fn endpoint(cfg: &mut ClusterConfig) {
    cfg.nic.kind = NicKind::Simple;
    cfg.nic.send_ns = 2000.0;
    cfg.nic.recv_ns = 1000.0;
    cfg.nic.dma_mbs = 132.0;
}

pub fn ccc_config() -> ClusterConfig {
    let mut cfg = ClusterConfig::default();
    endpoint(&mut cfg);
    // THNPC-II-like: 256-byte frames, the NIC model timing the DMA.
    let mut net = XSwitchNetConfig::on("ccc:5,5");
    (net.switch.frame_size, net.switch.dma_delay) = (256, 0);
    net.switch.watchdog = 1_000_000;
    cfg.fabric = FabricConfig::Xswitch(XSwitchFabricConfig {
        net,
        clock_mhz: 100.0,
        ..XSwitchFabricConfig::default()
    });
    cfg.workload.kind = WorkloadKind::Bcast;
    cfg.workload.algorithm = BcastAlgorithm::Ilbm;
    cfg.workload.bytes = 65_536;
    cfg
}

pub fn alltoall_config() -> ClusterConfig {
    let mut cfg = ClusterConfig::default();
    endpoint(&mut cfg);
    cfg.fabric = FabricConfig::VcRouter(VcFabricConfig {
        net: VcNetConfig {
            router: VcParams {
                watchdog: 1_000_000,
                ..VcParams::default()
            },
            ..VcNetConfig::on("mesh:8x8")
        },
        clock_mhz: 1000.0,
        ..VcFabricConfig::default()
    });
    cfg.workload.kind = WorkloadKind::Alltoall;
    cfg.workload.bytes = 4096;
    cfg
}

/// Runs `cfg` once; returns the messages delivered.
pub fn run(cfg: &ClusterConfig) -> Result<f64, ModelError> {
    let m = Cluster::run(cfg, 1, &NoProgress)?;
    m.get("messages")
        .map(|x| x.value)
        .ok_or_else(|| ModelError::Failed("no `messages` metric".into()))
}

/// This crate's targets for `icnlab bench`, in the order it lists them.
pub fn targets() -> Vec<icn_engine::bench::Target> {
    use icn_engine::bench::Target;
    vec![
        // Cluster (issue 13): both workloads live in `icn_cluster::bench`.
        Target {
            name: "cluster-ccc",
            workload: "cluster: CCCBrd broadcast of 64 KB on CCC(5,5) (160 nodes) of X-Switches, X-NIA-like endpoints",
            unit: "messages",
            run: || run(&ccc_config()).map_err(|e| e.to_string()),
        },
        Target {
            name: "cluster-alltoall",
            workload: "cluster: all-to-all of 4 KB on an 8x8 mesh of VC routers (4,032 messages), X-NIA-like endpoints",
            unit: "messages",
            run: || run(&alltoall_config()).map_err(|e| e.to_string()),
        },
        // Issue 21: the TI replay's speed beside SimGrid's (`bench/ti32.rs`).
        Target {
            name: "cluster-ti32",
            workload: "cluster: the shared 32-rank SimGrid TI trace (3,232 actions) on the flow fabric as SimGrid's crossbar cluster; SimGrid 3.32's replay timed once beside it when smpirun is present",
            unit: "actions",
            run: ti32::run_whole_on_flow,
        },
        Target {
            name: "cluster-ti32-vc",
            workload: "cluster: the 32-rank trace's first phase (3,702 messages) on a 32-port VC router at the platform's 125 MB/s links, cycle level; SimGrid 3.32's replay of the same phase timed once beside it when smpirun is present",
            unit: "actions",
            run: ti32::run_phase1_on_vc_router,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_workloads_are_valid() {
        Cluster::validate(&ccc_config()).unwrap();
        Cluster::validate(&alltoall_config()).unwrap();
    }
}
