//! Reading the files an experiment names (traces, graph files, profiles) with a bound: a
//! path such as `/dev/zero`, a FIFO that never ends or a multi-gigabyte file would otherwise
//! be read until memory runs out. Every model reads its side files through
//! [`read_to_string`], so every such file is refused the same way, as an input error.

use std::io::{self, Read};
use std::path::Path;

/// Largest side file a model reads: 256 MiB (a trace of millions of rows; far beyond any
/// graph or profile).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// `std::fs::read_to_string` that stops after [`MAX_INPUT_BYTES`]: a larger (or endless)
/// input is an error of kind `FileTooLarge` saying so, and a directory is an error too.
pub fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    read_at_most(path.as_ref(), MAX_INPUT_BYTES)
}

/// Opens `path` for reading without waiting: a directory is an error, and a FIFO is opened
/// without blocking (a plain open of a FIFO nobody writes to waits forever; this one reads
/// what a writer that holds it open sends, or nothing).
pub fn open(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    if !kind.is_fifo() {
        return std::fs::File::open(path);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    // Back to blocking reads: a writer's data is waited for, and with no writer a read
    // returns end of file at once.
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
    Ok(file)
}

/// [`read_to_string`] with the bound `limit` in bytes; text that is not UTF-8 is an error
/// naming the first bad byte.
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<String> {
    let file = open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        let size = if limit >= 1 << 20 {
            format!("{} MiB", limit >> 20)
        } else {
            format!("{limit} bytes")
        };
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {size}, the limit of this kind of file"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_and_oversized_inputs_are_refused() {
        let e = read_at_most(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        let dir = std::env::temp_dir();
        assert_eq!(
            read_to_string(&dir).unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
        let file = dir.join(format!("icn-engine-input-{}", std::process::id()));
        std::fs::write(&file, "two\nlines\n").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "two\nlines\n");
        assert!(read_at_most(&file, 4).is_err());
        std::fs::remove_file(&file).unwrap();
        // A FIFO nobody writes to: end of file at once, where a plain open waited forever.
        let fifo = dir.join(format!("icn-engine-fifo-{}", std::process::id()));
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert_eq!(read_to_string(&fifo).unwrap(), "");
        std::fs::remove_file(&fifo).unwrap();
    }
}
