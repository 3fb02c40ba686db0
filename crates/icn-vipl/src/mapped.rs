//! Whether a range of this process's memory is mapped readable and writable, from
//! `/proc/self/maps`: `VipRegisterMem` refuses memory the library could not use without a
//! fault (an unmapped address such as `0x1000`, a read-only mapping).

use std::io::{BufRead, BufReader};

/// One line of `/proc/self/maps`: `start-end perms ...` (hex addresses, perms like `rw-p`).
fn parse(line: &str) -> Option<(usize, usize, bool)> {
    let mut f = line.split_ascii_whitespace();
    let (a, b) = f.next()?.split_once('-')?;
    let perms = f.next()?.as_bytes();
    let rw = perms.len() >= 2 && perms[0] == b'r' && perms[1] == b'w';
    Some((
        usize::from_str_radix(a, 16).ok()?,
        usize::from_str_radix(b, 16).ok()?,
        rw,
    ))
}

/// `Ok` if every byte of `[start, start+len)` lies in mappings that are readable and
/// writable; else why not, naming the first byte that is not.
pub fn check_rw(start: usize, len: usize) -> Result<(), String> {
    let end = start
        .checked_add(len)
        .ok_or_else(|| format!("region {start:#x}+{len} wraps around the address space"))?;
    let maps = std::fs::File::open("/proc/self/maps")
        .map_err(|e| format!("cannot read /proc/self/maps: {e}"))?;
    covered(
        BufReader::new(maps).lines().map_while(Result::ok),
        start,
        end,
    )
}

/// [`check_rw`] over the lines of a maps file (sorted by address, as the kernel lists them).
fn covered(lines: impl Iterator<Item = String>, start: usize, end: usize) -> Result<(), String> {
    let mut at = start;
    for line in lines {
        let Some((a, b, rw)) = parse(&line) else {
            continue;
        };
        if b <= at {
            continue;
        }
        if a > at {
            break;
        }
        if !rw {
            return Err(format!(
                "memory at {at:#x} is mapped without read and write permission"
            ));
        }
        at = b;
        if at >= end {
            return Ok(());
        }
    }
    Err(format!(
        "memory at {at:#x} (region {start:#x}..{end:#x}) is not mapped"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> impl Iterator<Item = String> + '_ {
        s.lines().map(str::to_string)
    }

    const MAPS: &str = "1000-3000 rw-p 00000000 00:00 0\n\
                        3000-4000 rw-p 00000000 00:00 0\n\
                        5000-6000 r--p 00000000 00:00 0 /lib/x.so\n";

    #[test]
    fn ranges_inside_contiguous_rw_mappings_pass_and_others_name_the_gap() {
        assert!(covered(lines(MAPS), 0x1000, 0x3000).is_ok());
        assert!(covered(lines(MAPS), 0x2fff, 0x3002).is_ok()); // across two mappings
        let e = covered(lines(MAPS), 0x3800, 0x4800).unwrap_err();
        assert!(e.contains("0x4000") && e.contains("not mapped"), "{e}");
        let e = covered(lines(MAPS), 0x5000, 0x5001).unwrap_err();
        assert!(e.contains("permission"), "{e}");
        assert!(covered(lines(MAPS), 0x0, 0x10).is_err());
        assert!(check_rw(usize::MAX, 2).unwrap_err().contains("wraps"));
    }

    #[test]
    fn this_process_heap_passes_and_page_one_does_not() {
        let v = vec![0u8; 10000];
        assert!(check_rw(v.as_ptr() as usize, v.len()).is_ok());
        assert!(check_rw(0x1000, 1).is_err());
    }
}
