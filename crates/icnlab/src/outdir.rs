//! Output folders that are replaced whole: a reader (or a later `merge`/`plot`) finds either the
//! complete previous result or the complete new one, never a mix, a truncated file or a stale
//! `plot.svg` left over from another configuration.
//!
//! Why: outputs used to be written in place. Ctrl-C while writing left a truncated report.json
//! beside an older data.csv; re-running into a folder kept plot.svg / per_source.csv from the
//! earlier run; a full disk left a 0-byte data.csv beside a complete report.json (issue 14).
//!
//! How: every output is written into a hidden staging folder beside the target
//! (`.<name>.icnlab-new-<pid>`), which then takes the target's place in one step — a plain
//! `rename` when the target does not exist, else Linux's `renameat2(RENAME_EXCHANGE)`, after
//! which the old folder (now under the staging name) is deleted. The staging folder lists what
//! it holds in [`MANIFEST`]; files in the old folder that no icnlab run produced (not in its
//! manifest) are moved into the new folder before the swap, so a user's notes survive.
//! Staging folders of runs that were killed (their process is gone) are removed by the next
//! run into the same target. Where the exchange is not supported (another OS or file system),
//! files are renamed one by one — each file is still whole, but a kill between two renames can
//! mix them; the error of such a failure names the file.

use crate::exec::ExecError;
use std::fs;
use std::path::{Path, PathBuf};

/// The list of files an icnlab run produced, one name a line, inside each output folder.
pub const MANIFEST: &str = ".icnlab-outputs";

/// Names an earlier icnlab (without a manifest) wrote: treated as icnlab's own when no
/// manifest says otherwise, so that they are replaced rather than kept stale.
fn legacy_output(name: &str) -> bool {
    name == "report.json" || name == "plot.svg" || name.ends_with(".csv")
}

/// A staging folder that becomes `target` on [`Staging::commit`]; removed if dropped uncommitted.
pub struct Staging {
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

fn usage(what: &str, path: &Path, e: impl std::fmt::Display) -> ExecError {
    ExecError::Usage(format!("{what} {}: {e}", path.display()))
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> ExecError {
    ExecError::Failed(format!("{what} {}: {e}", path.display()))
}

impl Staging {
    /// Checks that `target` can be an output folder (not a file; its parent can be created and
    /// written) and creates the staging folder beside it. Errors here are the user's input
    /// (exit 2) and happen before anything runs.
    pub fn begin(target: &Path) -> Result<Staging, ExecError> {
        if target.exists() && !target.is_dir() {
            return Err(ExecError::Usage(format!(
                "--out {}: exists and is not a folder",
                target.display()
            )));
        }
        let name = target
            .file_name()
            .filter(|n| *n != "." && *n != "..")
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                ExecError::Usage(format!(
                    "--out {}: name a folder (e.g. out/run1), not `.`, `..` or a root",
                    target.display()
                ))
            })?;
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| usage("cannot create folder", &parent, e))?;
        remove_abandoned(&parent, &name);
        let dir = parent.join(format!(".{name}.icnlab-new-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| failed("cannot remove", &dir, e))?;
        }
        fs::create_dir(&dir).map_err(|e| usage("cannot write into", &parent, e))?;
        Ok(Staging {
            target: target.to_path_buf(),
            dir,
            committed: false,
        })
    }

    /// Where to write the outputs now.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The folder the outputs will be in after [`commit`](Self::commit).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// `message` with the staging folder's name replaced by the target's (errors name the
    /// file the user asked for).
    pub fn rename_in(&self, message: &str) -> String {
        message.replace(
            &self.dir.display().to_string(),
            &self.target.display().to_string(),
        )
    }

    /// Writes the manifest and puts the staging folder in the target's place.
    pub fn commit(mut self) -> Result<(), ExecError> {
        let mut names: Vec<String> = fs::read_dir(&self.dir)
            .map_err(|e| failed("cannot list", &self.dir, e))?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != MANIFEST)
            .collect();
        names.sort();
        let manifest = self.dir.join(MANIFEST);
        fs::write(&manifest, names.join("\n") + "\n")
            .map_err(|e| failed("cannot write", &self.target.join(MANIFEST), e))?;
        if self.target.is_dir() {
            self.keep_foreign_files()?;
            if exchange(&self.dir, &self.target).is_ok() {
                // The old folder is now at the staging name; Drop removes it.
                self.committed = false;
                return Ok(());
            }
            self.replace_file_by_file(&names)?;
        } else {
            fs::rename(&self.dir, &self.target)
                .map_err(|e| failed("cannot create", &self.target, e))?;
        }
        self.committed = true;
        Ok(())
    }

    /// Moves files of the old folder that no icnlab run produced into the staging folder.
    fn keep_foreign_files(&self) -> Result<(), ExecError> {
        let ours = outputs_of(&self.target);
        let entries =
            fs::read_dir(&self.target).map_err(|e| failed("cannot list", &self.target, e))?;
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == MANIFEST || ours.contains(&name) || self.dir.join(&name).exists() {
                continue;
            }
            fs::rename(entry.path(), self.dir.join(&name))
                .map_err(|e| failed("cannot keep", &entry.path(), e))?;
        }
        Ok(())
    }

    /// Fallback without an atomic exchange: everything in the staging folder (new outputs,
    /// manifest, and the user's files [`keep_foreign_files`](Self::keep_foreign_files) moved
    /// there) renamed into the target, then the old outputs this run did not produce removed.
    fn replace_file_by_file(&self, names: &[String]) -> Result<(), ExecError> {
        let stale: Vec<String> = outputs_of(&self.target)
            .into_iter()
            .filter(|n| !names.contains(n))
            .collect();
        let entries = fs::read_dir(&self.dir).map_err(|e| failed("cannot list", &self.dir, e))?;
        for entry in entries.filter_map(Result::ok) {
            let to = self.target.join(entry.file_name());
            fs::rename(entry.path(), &to).map_err(|e| failed("cannot write", &to, e))?;
        }
        for name in stale {
            let path = self.target.join(&name);
            if path.is_file() {
                fs::remove_file(&path).map_err(|e| failed("cannot remove stale", &path, e))?;
            }
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// The files an icnlab run wrote into `dir`: its manifest, or the legacy names.
fn outputs_of(dir: &Path) -> Vec<String> {
    match fs::read_to_string(dir.join(MANIFEST)) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.is_empty() && !l.contains('/'))
            .map(str::to_owned)
            .collect(),
        Err(_) => fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| legacy_output(n))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Removes staging folders for `name` in `parent` whose process no longer runs.
fn remove_abandoned(parent: &Path, name: &str) {
    let prefix = format!(".{name}.icnlab-new-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file.strip_prefix(&prefix) else {
            continue;
        };
        let alive = pid.parse::<u32>().is_ok_and(|p| {
            p == std::process::id() || Path::new("/proc").join(p.to_string()).exists()
        });
        if !alive {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so that
/// `path` is never seen half-written (for single files such as `results/index.html`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExecError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.icnlab-tmp-{}", std::process::id()));
    let result = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(failed("cannot write", path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_run_replaces_the_old_outputs_and_keeps_foreign_files() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let s = Staging::begin(&out).unwrap();
        fs::write(s.path().join("plot.svg"), "old").unwrap();
        fs::write(s.path().join("data.csv"), "old").unwrap();
        s.commit().unwrap();
        fs::write(out.join("notes.txt"), "mine").unwrap();

        let s = Staging::begin(&out).unwrap();
        fs::write(s.path().join("data.csv"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(files(&out), [MANIFEST, "data.csv", "notes.txt"]);
        assert_eq!(fs::read_to_string(out.join("data.csv")).unwrap(), "new");
        assert_eq!(
            fs::read_to_string(out.join(MANIFEST)).unwrap(),
            "data.csv\n"
        );
        // Nothing but the target is left in the parent.
        assert_eq!(files(tmp.path()), ["out"]);
    }

    #[test]
    fn an_uncommitted_staging_leaves_the_old_result_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("report.json"), "old").unwrap();
        let s = Staging::begin(&out).unwrap();
        fs::write(s.path().join("report.json"), "half").unwrap();
        drop(s);
        assert_eq!(files(&out), ["report.json"]);
        assert_eq!(files(tmp.path()), ["out"]);
    }

    #[test]
    fn legacy_outputs_without_a_manifest_are_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        fs::create_dir(&out).unwrap();
        for f in ["report.json", "plot.svg", "links.csv", "README"] {
            fs::write(out.join(f), "old").unwrap();
        }
        let s = Staging::begin(&out).unwrap();
        fs::write(s.path().join("report.json"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(files(&out), [MANIFEST, "README", "report.json"]);
    }

    #[test]
    fn abandoned_staging_of_a_dead_process_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        // pid 0 is never a user process.
        let dead = tmp.path().join(".out.icnlab-new-0");
        fs::create_dir(&dead).unwrap();
        let s = Staging::begin(&tmp.path().join("out")).unwrap();
        assert!(!dead.exists());
        s.commit().unwrap();
    }

    /// The path taken where `RENAME_EXCHANGE` is unsupported: same end state, user files kept.
    #[test]
    fn the_file_by_file_fallback_keeps_user_files_and_drops_stale_outputs() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join(MANIFEST), "data.csv\nplot.svg\n").unwrap();
        for f in ["data.csv", "plot.svg", "notes.txt"] {
            fs::write(out.join(f), "old").unwrap();
        }
        let s = Staging::begin(&out).unwrap();
        fs::write(s.path().join("data.csv"), "new").unwrap();
        fs::write(s.path().join(MANIFEST), "data.csv\n").unwrap();
        s.keep_foreign_files().unwrap();
        s.replace_file_by_file(&["data.csv".to_owned()]).unwrap();
        drop(s);
        assert_eq!(files(&out), [MANIFEST, "data.csv", "notes.txt"]);
        assert_eq!(fs::read_to_string(out.join("data.csv")).unwrap(), "new");
        assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "old");
        assert_eq!(files(tmp.path()), ["out"]);
    }

    #[test]
    fn write_atomic_replaces_whole_files_and_names_the_file_on_error() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("index.html");
        write_atomic(&f, b"old").unwrap();
        write_atomic(&f, b"new").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(files(tmp.path()), ["index.html"]);
        let missing = tmp.path().join("no/such/dir/x.svg");
        let e = write_atomic(&missing, b"x").unwrap_err().to_string();
        assert!(e.contains(&missing.display().to_string()), "{e}");
    }

    #[test]
    fn a_file_is_not_an_output_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        fs::write(&file, "x").unwrap();
        assert!(matches!(Staging::begin(&file), Err(ExecError::Usage(_))));
        assert!(matches!(
            Staging::begin(Path::new(".")),
            Err(ExecError::Usage(_))
        ));
    }
}
