//! The registry of models the CLI can run, by the name used in `model = "..."`.

use crate::exec::{ModelRunner, Runner};
use crate::mm1::Mm1;
use icn_bcast::Bcast;
use icn_cluster::model::Cluster;
use icn_nicmodel::Nic;
use icn_sci::Sci;
use icn_sci::switched::SciSwitched;
use icn_thnet::vc_model::VcRouter;
use icn_thnet::xswitch_model::XSwitch;
use icn_via::model::ViaBench;

static SCI: ModelRunner<Sci> = ModelRunner::new();
static SCI_SWITCHED: ModelRunner<SciSwitched> = ModelRunner::new();
static NIC: ModelRunner<Nic> = ModelRunner::new();
static BCAST: ModelRunner<Bcast> = ModelRunner::new();
static MM1: ModelRunner<Mm1> = ModelRunner::new();
static XSWITCH: ModelRunner<XSwitch> = ModelRunner::new();
static VC_ROUTER: ModelRunner<VcRouter> = ModelRunner::new();
static VIA_BENCH: ModelRunner<ViaBench> = ModelRunner::new();
static CLUSTER: ModelRunner<Cluster> = ModelRunner::new();

/// Every model, in the order `icnlab models` lists them.
pub fn all() -> [&'static dyn Runner; 9] {
    [
        &SCI,
        &SCI_SWITCHED,
        &XSWITCH,
        &VC_ROUTER,
        &NIC,
        &VIA_BENCH,
        &BCAST,
        &CLUSTER,
        &MM1,
    ]
}

pub fn find(name: &str) -> Option<&'static dyn Runner> {
    all().into_iter().find(|r| r.name() == name)
}

/// "sci, thnet, ..." for error messages.
pub fn names() -> String {
    all()
        .iter()
        .map(|r| format!("\"{}\"", r.name()))
        .collect::<Vec<_>>()
        .join(", ")
}
