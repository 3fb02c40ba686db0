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
//!
//! What the folder is and what may be touched (issue 22):
//! * `--out` through a symlink writes into the folder it points to (the link stays a link and
//!   staging happens beside the real folder, on its file system);
//! * the folder itself must be writable, checked before the run (a read-only folder under a
//!   writable parent used to run to the end and then fail);
//! * the folder is replaced in place, file by file, when it is (or holds) the current
//!   directory — swapping it would leave the caller's shell in a deleted folder — and when
//!   its parent is not writable (staging then happens inside the folder);
//! * only plain files an icnlab run listed are replaced or removed: a manifest entry that
//!   names a folder, a symlink or anything else is the user's and is kept.

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
    /// Staged inside the target and committed file by file (see the module documentation).
    in_place: bool,
}

fn usage(what: &str, path: &Path, e: impl std::fmt::Display) -> ExecError {
    ExecError::Usage(format!("{what} {}: {e}", path.display()))
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> ExecError {
    ExecError::Failed(format!("{what} {}: {e}", path.display()))
}

impl Staging {
    /// Checks that `target` can be an output folder (not a file; its parent can be created and
    /// written, or it exists and is writable itself) and creates the staging folder. Errors
    /// here are the user's input (exit 2) and happen before anything runs.
    pub fn begin(target: &Path) -> Result<Staging, ExecError> {
        let cwd = std::env::current_dir().ok();
        Staging::begin_from(target, cwd.as_deref())
    }

    /// [`begin`](Self::begin) for a caller whose current directory is `cwd`.
    fn begin_from(target: &Path, cwd: Option<&Path>) -> Result<Staging, ExecError> {
        let target = &resolve_link(target)?;
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
        let in_place = target.is_dir() && {
            writable(target).map_err(|e| usage("cannot write into --out folder", target, e))?;
            holds(target, cwd) || writable(&parent).is_err()
        };
        let home = if in_place {
            target.clone()
        } else {
            fs::create_dir_all(&parent).map_err(|e| usage("cannot create folder", &parent, e))?;
            parent.clone()
        };
        remove_abandoned(&home, &name);
        let dir = home.join(format!(".{name}.icnlab-new-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| failed("cannot remove", &dir, e))?;
        }
        fs::create_dir(&dir).map_err(|e| usage("cannot write into", &home, e))?;
        Ok(Staging {
            target: target.to_path_buf(),
            dir,
            committed: false,
            in_place,
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
        if self.in_place {
            self.replace_file_by_file(&names)?;
            // The staging folder, now empty, is removed by Drop.
            self.committed = false;
            return Ok(());
        }
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
            let plain = entry.file_type().is_ok_and(|t| t.is_file());
            if name == MANIFEST
                || (plain && ours.contains(&name))
                || self.dir.join(&name).symlink_metadata().is_ok()
            {
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
            if to.symlink_metadata().is_ok_and(|m| !m.is_file()) {
                // A folder or link of the user's where an output goes: never replaced.
                return Err(failed(
                    "not replacing (not a plain file icnlab wrote)",
                    &to,
                    "move it away and run again",
                ));
            }
            fs::rename(entry.path(), &to).map_err(|e| failed("cannot write", &to, e))?;
        }
        for name in stale {
            let path = self.target.join(&name);
            if path.symlink_metadata().is_ok_and(|m| m.is_file()) {
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

/// `target` itself when it is not a symlink; else the folder the link leads to (a link that
/// leads nowhere is an input error).
fn resolve_link(target: &Path) -> Result<PathBuf, ExecError> {
    match fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(target)
            .map_err(|e| usage("--out is a symlink that leads nowhere:", target, e)),
        _ => Ok(target.to_path_buf()),
    }
}

/// Whether `dir` can take new files: one is created and removed (permission bits alone do
/// not tell: a read-only mount, an immutable folder, or root).
fn writable(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".icnlab-probe-{}", std::process::id()));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    fs::remove_file(&probe)
}

/// Whether `cwd` is `dir` or inside it (by any spelling: both resolved).
fn holds(dir: &Path, cwd: Option<&Path>) -> bool {
    let (Ok(dir), Some(Ok(cwd))) = (fs::canonicalize(dir), cwd.map(fs::canonicalize)) else {
        return false;
    };
    cwd.starts_with(dir)
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

    /// `--out` through a symlink: the outputs land in the folder it points to, the link and
    /// the user's files there stay (the link used to be swapped for a new folder).
    #[test]
    fn a_symlinked_out_writes_into_its_target_and_keeps_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        fs::create_dir(&data).unwrap();
        fs::write(data.join("notes.txt"), "mine").unwrap();
        fs::write(data.join("report.json"), "old").unwrap();
        let link = tmp.path().join("out");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        let s = Staging::begin(&link).unwrap();
        fs::write(s.path().join("report.json"), "new").unwrap();
        s.commit().unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(data.join("report.json")).unwrap(), "new");
        assert_eq!(fs::read_to_string(data.join("notes.txt")).unwrap(), "mine");
        let dangling = tmp.path().join("nowhere");
        std::os::unix::fs::symlink(tmp.path().join("missing"), &dangling).unwrap();
        assert!(matches!(
            Staging::begin(&dangling),
            Err(ExecError::Usage(_))
        ));
    }

    /// `--out` naming the caller's current directory (here by its absolute path, as `../x`
    /// or `$PWD` would): the folder is kept — same inode — and filled in place, so the
    /// caller's shell is not left in a deleted folder.
    #[test]
    fn the_current_directory_is_filled_in_place_never_swapped() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("data.csv"), "old").unwrap();
        fs::write(out.join("plot.svg"), "old").unwrap();
        fs::write(out.join("mine.txt"), "mine").unwrap();
        let inode = fs::metadata(&out).unwrap().ino();
        let cwd = out.join(".");
        let s = Staging::begin_from(&out, Some(&cwd)).unwrap();
        fs::write(s.path().join("data.csv"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::metadata(&out).unwrap().ino(), inode);
        assert_eq!(files(&out), [MANIFEST, "data.csv", "mine.txt"]);
        assert_eq!(fs::read_to_string(out.join("data.csv")).unwrap(), "new");
        assert_eq!(files(tmp.path()), ["out"]);
        // A folder holding the current directory is kept as well.
        let inner = out.join("sub");
        fs::create_dir(&inner).unwrap();
        let s = Staging::begin_from(&out, Some(&inner)).unwrap();
        s.commit().unwrap();
        assert_eq!(fs::metadata(&out).unwrap().ino(), inode);
        assert!(inner.is_dir());
    }

    /// A tampered manifest naming a folder, a symlink or a missing file: none of them is
    /// deleted (the folder used to go with the old output folder, recursively).
    #[test]
    fn manifest_entries_that_are_not_plain_files_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let precious = tmp.path().join("precious.txt");
        fs::write(&precious, "keep").unwrap();
        fs::create_dir_all(out.join("thesis")).unwrap();
        fs::write(out.join("thesis/ch1.tex"), "text").unwrap();
        std::os::unix::fs::symlink(&precious, out.join("link.csv")).unwrap();
        fs::write(out.join("data.csv"), "old").unwrap();
        fs::write(
            out.join(MANIFEST),
            "thesis\nlink.csv\ndata.csv\n../precious.txt\n",
        )
        .unwrap();
        for cwd in [None, Some(out.clone())] {
            let s = Staging::begin_from(&out, cwd.as_deref()).unwrap();
            fs::write(s.path().join("data.csv"), "new").unwrap();
            s.commit().unwrap();
            assert_eq!(
                fs::read_to_string(out.join("thesis/ch1.tex")).unwrap(),
                "text"
            );
            assert!(
                fs::symlink_metadata(out.join("link.csv"))
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(fs::read_to_string(&precious).unwrap(), "keep");
            assert_eq!(fs::read_to_string(out.join("data.csv")).unwrap(), "new");
            // The next run's manifest is this run's: put the tampered one back.
            fs::write(out.join(MANIFEST), "thesis\nlink.csv\ndata.csv\n").unwrap();
        }
    }

    /// What [`writability_is_checked_on_the_folder_itself`] asserts, given a folder that
    /// cannot take files (`ro`) and a writable folder under a parent that cannot (`out`).
    fn refuses_the_folder_and_uses_in_place(ro: &Path, out: &Path) {
        let e = Staging::begin(ro)
            .err()
            .expect("a read-only folder is refused");
        assert!(matches!(e, ExecError::Usage(_)), "{e}");
        let s = Staging::begin(out).unwrap();
        fs::write(s.path().join("data.csv"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read_to_string(out.join("data.csv")).unwrap(), "new");
    }

    /// Writability is checked on the folder itself, before the run, and a writable folder
    /// under a read-only parent is used in place. Permission bits do not bind root (CI), so
    /// as root the test runs itself again in a private mount namespace (`unshare -m`) where
    /// `ro` and the parent are read-only bind mounts, and `out` a writable mount inside the
    /// read-only parent. Only where no namespace can be made (no `unshare`, or no
    /// CAP_SYS_ADMIN in a container) is it skipped, saying so.
    #[test]
    fn writability_is_checked_on_the_folder_itself() {
        use std::os::unix::fs::PermissionsExt;
        if let (Some(ro), Some(out)) = (
            std::env::var_os("ICNLAB_TEST_RO"),
            std::env::var_os("ICNLAB_TEST_OUT"),
        ) {
            // Inside the namespace the mounts were made for.
            refuses_the_folder_and_uses_in_place(Path::new(&ro), Path::new(&out));
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let ro = tmp.path().join("ro");
        let parent = tmp.path().join("locked");
        let out = parent.join("out");
        fs::create_dir(&ro).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
        fs::set_permissions(&parent, fs::Permissions::from_mode(0o555)).unwrap();
        if writable(&ro).is_err() {
            refuses_the_folder_and_uses_in_place(&ro, &out);
            fs::set_permissions(&parent, fs::Permissions::from_mode(0o755)).unwrap();
            return;
        }
        // Root. The writable `out` is mounted from a folder outside the read-only parent.
        let real_out = tmp.path().join("real-out");
        fs::create_dir(&real_out).unwrap();
        let script = r#"
            set -e
            ro_mount() { mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"; }
            { ro_mount "$RO" && ro_mount "$PARENT" && mount --bind "$REAL_OUT" "$OUT"; } 2>&1 || exit 77
            exec "$0" --exact outdir::tests::writability_is_checked_on_the_folder_itself --test-threads 1
        "#;
        let run = std::process::Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script])
            .arg(std::env::current_exe().unwrap())
            .env("RO", &ro)
            .env("PARENT", &parent)
            .env("OUT", &out)
            .env("REAL_OUT", &real_out)
            .env("ICNLAB_TEST_RO", &ro)
            .env("ICNLAB_TEST_OUT", &out)
            .output();
        fs::set_permissions(&parent, fs::Permissions::from_mode(0o755)).unwrap();
        let run = match run {
            Ok(r) if r.status.code() != Some(77) => r,
            Ok(r) => {
                eprintln!(
                    "skipped: running as root and no read-only mount can be made here ({})",
                    String::from_utf8_lossy(&r.stdout).trim()
                );
                return;
            }
            Err(e) => {
                eprintln!("skipped: running as root and `unshare` cannot run: {e}");
                return;
            }
        };
        assert!(
            run.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(
            String::from_utf8_lossy(&run.stdout).contains("1 passed"),
            "the test ran in the namespace"
        );
        // What the namespace's run wrote went through the mount into the real folder.
        assert_eq!(
            fs::read_to_string(real_out.join("data.csv")).unwrap(),
            "new"
        );
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
