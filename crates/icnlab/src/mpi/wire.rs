//! The messages ranks send to rank 0, and their bytes.
//!
//! CBOR (ciborium), not JSON: a replication's metrics must reach rank 0 bit for bit, and JSON
//! has no infinity or NaN (serde_json writes both as `null`, so an infinite latency would come
//! back as NaN and change the aggregate). The format is self-describing, which `Metrics`
//! needs (it skips empty fields). A message that does not decode (a rank running another
//! icnlab version) is an error naming the rank, never a misread.

use icn_engine::Metrics;
use serde::{Deserialize, Serialize};

/// Why a rank stopped: the exit code a one-process run would have used (2 bad input, 1 failed
/// run, 101 panic) and the message it would have printed after `error: `.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
}

impl From<crate::exec::ExecError> for Failure {
    fn from(e: crate::exec::ExecError) -> Self {
        Failure::new(crate::exit_code(&e), e.to_string())
    }
}

/// What one rank ran: the metrics of its jobs, in its share's order, and on how many worker
/// threads (report.json records the threads of all ranks together).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub threads: usize,
    pub metrics: Vec<Metrics>,
}

/// One rank's word to rank 0 at the end of a phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// After preparing: ready to run `fingerprint` (icnlab version, experiment, plan); rank 0
    /// checks that every rank runs the same.
    Ready {
        fingerprint: String,
    },
    /// After running.
    Ran(Share),
    Failed(Failure),
}

pub fn encode(message: &Message) -> Vec<u8> {
    let mut bytes = Vec::new();
    ciborium::into_writer(message, &mut bytes).expect("writing into a Vec cannot fail");
    bytes
}

pub fn decode(bytes: &[u8]) -> Result<Message, String> {
    ciborium::from_reader(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::{Metrics, Status};
    use proptest::prelude::*;

    fn metrics(values: &[f64]) -> Metrics {
        let mut m = Metrics::default();
        for (i, &v) in values.iter().enumerate() {
            m.push(&format!("m{i}"), v, "unit", "about");
        }
        m
    }

    /// Same bits after the trip (NaN stays NaN: its payload carries nothing icnlab writes).
    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn non_finite_values_survive_where_json_loses_them() {
        let values = [
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        let m = metrics(&values);
        let msg = Message::Ran(Share {
            threads: 1,
            metrics: vec![m.clone()],
        });
        let Message::Ran(Share { metrics: back, .. }) = decode(&encode(&msg)).unwrap() else {
            panic!("wrong message kind")
        };
        for (a, b) in m.scalars.iter().zip(&back[0].scalars) {
            assert!(same(a.value, b.value), "{} became {}", a.value, b.value);
        }
        // The reason for CBOR: JSON turns infinity into NaN.
        let json: Metrics = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert!(json.scalars[0].value.is_nan());
    }

    #[test]
    fn statuses_and_failures_round_trip() {
        let mut m = metrics(&[1.5]);
        m.status = Status::Deadlocked("cycle a -> b -> a".into());
        m.notes.push("calibrated".into());
        for msg in [
            Message::Ran(Share {
                threads: 2,
                metrics: vec![m, Metrics::failed(Status::Failed("boom".into()))],
            }),
            Message::Failed(Failure::new(2, "bad key")),
            Message::Ready {
                fingerprint: "0.1.0 abc".into(),
            },
        ] {
            assert_eq!(decode(&encode(&msg)).unwrap(), msg);
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_message() {
        assert!(decode(b"not cbor at all").is_err());
        assert!(decode(&[]).is_err());
    }

    proptest! {
        #[test]
        fn every_f64_arrives_bit_for_bit(bits in proptest::collection::vec(any::<u64>(), 0..20)) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
            let m = metrics(&values);
            let msg = Message::Ran(Share { threads: 1, metrics: vec![m] });
            let Ok(Message::Ran(Share { metrics: back, .. })) = decode(&encode(&msg)) else {
                panic!("did not decode")
            };
            prop_assert_eq!(back[0].scalars.len(), values.len());
            for (v, b) in values.iter().zip(&back[0].scalars) {
                prop_assert!(same(*v, b.value), "{} became {}", v, b.value);
            }
        }
    }
}
