//! Recording a VIA program's communication (filled in below).

use icn_via::{Completion, Descriptor, Vi};

pub struct Recorder;

impl Recorder {
    pub fn from_env() -> Option<std::sync::Arc<Recorder>> {
        None
    }
    pub fn posted(&self, _d: &Descriptor) {}
    pub fn completed(&self, _c: &Completion) {}
    pub fn connected(&self, _vi: &Vi) {}
    pub fn finish(&self) {}
}
