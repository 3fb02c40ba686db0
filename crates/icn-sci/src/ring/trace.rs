//! Trace-driven traffic: a CSV file with header `cycle,src,dst,bytes`, one send per line,
//! sorted by cycle. Every problem is an [`Invalid`] for key `traffic.trace_file` whose message
//! names the file and line.

use icn_engine::Invalid;

const KEY: &str = "traffic.trace_file";

/// One send of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    pub cycle: u64,
    pub src: u8,
    pub dst: u8,
    /// Index into the configured `data_bytes`.
    pub size_class: u8,
}

/// A parsed, validated trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub entries: Vec<TraceEntry>,
}

impl Trace {
    /// Reads and parses `path` for a ring of `nodes` nodes whose sends carry `data_bytes`.
    pub fn load(path: &str, nodes: usize, data_bytes: &[u16]) -> Result<Trace, Invalid> {
        let text = icn_engine::input::read_to_string(path)
            .map_err(|e| Invalid::new(KEY, format!("{path}: cannot read: {e}")))?;
        Trace::parse(path, &text, nodes, data_bytes)
    }

    /// Parses trace text; `name` labels errors.
    pub fn parse(
        name: &str,
        text: &str,
        nodes: usize,
        data_bytes: &[u16],
    ) -> Result<Trace, Invalid> {
        let mut lines = text.lines().enumerate();
        let header: Vec<String> = lines
            .next()
            .map(|(_, h)| h.split(',').map(|c| c.trim().to_owned()).collect())
            .unwrap_or_default();
        if header != ["cycle", "src", "dst", "bytes"] {
            return Err(Invalid::new(
                KEY,
                format!("{name}:1: header must be `cycle,src,dst,bytes`"),
            ));
        }
        let mut entries = Vec::new();
        let mut last = 0;
        for (i, line) in lines {
            let at = |msg: String| Invalid::new(KEY, format!("{name}:{}: {msg}", i + 1));
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() != 4 {
                return Err(at(format!("expected 4 fields, got {}", fields.len())));
            }
            let num = |k: usize, what: &str| {
                fields[k].parse::<u64>().map_err(|_| {
                    at(format!(
                        "{what} `{}` is not a non-negative integer",
                        fields[k]
                    ))
                })
            };
            let (cycle, src, dst, bytes) = (
                num(0, "cycle")?,
                num(1, "src")?,
                num(2, "dst")?,
                num(3, "bytes")?,
            );
            if cycle < last {
                return Err(at(format!(
                    "cycle {cycle} is before the previous line's {last}: the trace must be sorted by cycle"
                )));
            }
            last = cycle;
            for (what, node) in [("src", src), ("dst", dst)] {
                if node >= nodes as u64 {
                    return Err(at(format!(
                        "{what} node {node} does not exist (nodes 0 ..= {})",
                        nodes - 1
                    )));
                }
            }
            if src == dst {
                return Err(at(format!("src and dst are both {src}")));
            }
            let size_class = data_bytes
                .iter()
                .position(|&b| u64::from(b) == bytes)
                .ok_or_else(|| at(format!("{bytes} bytes is not a configured data size (data_bytes = {data_bytes:?}, each from 0, 16, 64, 256)")))?;
            entries.push(TraceEntry {
                cycle,
                src: src as u8,
                dst: dst as u8,
                size_class: size_class as u8,
            });
        }
        Ok(Trace { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [u16; 2] = [64, 16];

    fn parse(text: &str) -> Result<Trace, Invalid> {
        Trace::parse("t.csv", text, 4, &SIZES)
    }

    #[test]
    fn parses_a_good_trace() {
        let t = parse("cycle,src,dst,bytes\n0,1,2,64\n\n5,3,0,16\n5,0,3,64\n").unwrap();
        assert_eq!(t.entries.len(), 3);
        assert_eq!(
            t.entries[1],
            TraceEntry {
                cycle: 5,
                src: 3,
                dst: 0,
                size_class: 1
            }
        );
    }

    #[test]
    fn errors_name_key_file_and_line() {
        let cases = [
            ("cycle,src,dst\n", "t.csv:1"),
            (
                "cycle,src,dst,bytes\n0,1,4,64\n",
                "t.csv:2: dst node 4 does not exist",
            ),
            (
                "cycle,src,dst,bytes\n0,1,2,64\n0,9,2,64\n",
                "t.csv:3: src node 9",
            ),
            ("cycle,src,dst,bytes\n0,1,2,32\n", "t.csv:2: 32 bytes"),
            ("cycle,src,dst,bytes\n0,1,2,256\n", "t.csv:2: 256 bytes"),
            (
                "cycle,src,dst,bytes\n9,1,2,64\n3,1,2,64\n",
                "t.csv:3: cycle 3 is before",
            ),
            ("cycle,src,dst,bytes\n0,1,1,64\n", "t.csv:2: src and dst"),
            ("cycle,src,dst,bytes\n-1,1,2,64\n", "t.csv:2: cycle `-1`"),
            (
                "cycle,src,dst,bytes\n1,2,64\n",
                "t.csv:2: expected 4 fields",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.key, KEY);
            assert!(e.message.starts_with(want), "{text:?}: {}", e.message);
        }
        let missing = Trace::load("/nonexistent/trace.csv", 4, &SIZES).unwrap_err();
        assert!(missing.message.contains("cannot read"));
    }
}
