//! What a job sees, as the steps [`Jail::enter`](super::Jail::enter) takes: [`steps`] reads the
//! machine in the parent (which system folders exist, where their links point, canonical paths)
//! in named parts, in the order a reader would list them: the system, `/dev`, private temp
//! folders, the toolchains, the trusted PATH, the project (with its read-only files and what its
//! shield covers), granted stores, opted-in sockets, the job's own state, and what stays hidden
//! beneath all of it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{DEVICES, JailSpec, OVERLAY_SCRATCH, SYSTEM, Step, cstr, dest};
use crate::error::ExecError;
use crate::places::{JOB_VIEW, TOOLCHAINS, user_tool_home};

/// The steps of a job's view, parents before children and each hide after the bind it covers.
pub(super) fn steps(spec: &JailSpec<'_>) -> Result<Vec<Step>, ExecError> {
    let mut view = View { spec, steps: Vec::new(), exposed: Vec::new() };
    view.system()?;
    view.devices()?;
    view.private_temp()?;
    view.toolchains()?;
    view.trusted_path()?;
    view.project()?;
    view.granted()?;
    view.sockets()?;
    let cargo_home = view.job_state()?;
    view.hidden(cargo_home.as_ref())?;
    let mut steps = view.steps;
    steps.sort_by_key(|s| (s.dest().0.len(), matches!(s, Step::Hide { .. })));
    Ok(steps)
}

struct View<'a> {
    spec: &'a JailSpec<'a>,
    steps: Vec<Step>,
    /// What is bound so far, where the job sees it.
    exposed: Vec<PathBuf>,
}

/// The user's cargo home as given and as it really is: the lower layer of the job's copy.
struct CargoHome<'a> {
    given: &'a Path,
    real: PathBuf,
}

impl<'a> View<'a> {
    /// `at` (through its links, when it exists) bound at `at`.
    fn expose(&mut self, at: &Path, writable: bool, devices: bool) -> Result<(), ExecError> {
        let Ok(real) = std::fs::canonicalize(at) else { return Ok(()) };
        let file = !real.is_dir();
        self.steps.push(Step::Bind {
            src: cstr(real.as_os_str())?,
            dest: dest(at)?,
            file,
            writable,
            devices,
        });
        self.exposed.push(at.to_path_buf());
        Ok(())
    }

    fn is_exposed(&self, p: &Path) -> bool {
        self.exposed.iter().any(|e| p.starts_with(e))
    }

    /// The system folders, read-only; a link among them recreated as the same link.
    fn system(&mut self) -> Result<(), ExecError> {
        for sys in SYSTEM {
            let p = Path::new(sys);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = std::fs::read_link(p)
                        .map_err(|e| ExecError::os("reading a system link", e))?;
                    self.steps
                        .push(Step::Link { dest: dest(p)?, target: cstr(target.as_os_str())? });
                }
                Ok(m) if m.is_dir() => self.expose(p, false, false)?,
                _ => {}
            }
        }
        for d in ["/dev", "/proc", "/run", "/var", "/tmp", "/var/tmp", "/dev/shm"] {
            self.steps.push(Step::Dir(dest(Path::new(d))?));
        }
        Ok(())
    }

    /// The harmless devices, bound from the host's, and the `/dev/fd` links.
    fn devices(&mut self) -> Result<(), ExecError> {
        for dev in DEVICES {
            let p = Path::new("/dev").join(dev);
            if p.exists() {
                self.expose(&p, true, true)?;
            }
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            self.steps.push(Step::Link {
                dest: dest(&Path::new("/dev").join(name))?,
                target: cstr(OsStr::new(target))?,
            });
        }
        Ok(())
    }

    /// The job's private temp folders, at the usual places.
    fn private_temp(&mut self) -> Result<(), ExecError> {
        let spec = self.spec;
        for (at, src) in [("/tmp", spec.tmp), ("/var/tmp", spec.tmp), ("/dev/shm", spec.shm)] {
            let src = std::fs::canonicalize(src)
                .map_err(|e| ExecError::os("resolving the job's temp folder", e))?;
            self.steps.push(Step::Bind {
                src: cstr(src.as_os_str())?,
                dest: dest(Path::new(at))?,
                file: false,
                writable: true,
                devices: false,
            });
        }
        Ok(())
    }

    /// The home's toolchain folders (the home itself an empty folder), and rustup's home when
    /// it lives elsewhere.
    fn toolchains(&mut self) -> Result<(), ExecError> {
        if let Some(home) = self.spec.home {
            self.steps.push(Step::Dir(dest(home)?));
            for tc in TOOLCHAINS {
                let p = home.join(tc);
                if p.is_dir() {
                    self.expose(&p, false, false)?;
                }
            }
        }
        if let Some(p) = user_tool_home("RUSTUP_HOME", ".rustup")
            && p.is_dir()
            && !self.is_exposed(&p)
        {
            self.expose(&p, false, false)?;
        }
        Ok(())
    }

    /// The trusted PATH's folders, read-only, unless one would bring into view the home,
    /// Sluice's data folder or a credential store. npm's programs are links into the packages
    /// beside them: with `…/node_modules/.bin` comes its `node_modules`, with a global
    /// install's `<prefix>/bin` its `<prefix>/lib/node_modules`, under the same conditions.
    fn trusted_path(&mut self) -> Result<(), ExecError> {
        let spec = self.spec;
        let npm_packages = |dir: &PathBuf| -> Option<PathBuf> {
            let parent = dir.parent()?;
            match dir.file_name()?.to_str()? {
                ".bin" if parent.file_name()? == "node_modules" => Some(parent.to_path_buf()),
                "bin" => Some(parent.join("lib/node_modules")).filter(|p| p.is_dir()),
                _ => None,
            }
        };
        let dirs = spec.path_dirs.iter().flat_map(|d| [Some(d.clone()), npm_packages(d)]);
        for dir in dirs.flatten() {
            // Through its links: `/bin` is `/usr/bin`, already there.
            let Ok(real) = std::fs::canonicalize(&dir) else { continue };
            let dir = &real;
            let inside = |roots: &[PathBuf]| roots.iter().any(|r| dir.starts_with(r));
            // Never the home, Sluice's data folder or a folder above them (a PATH with `~`
            // or `/` in it): those would bring everything beneath into view.
            let above = |p: &Path| std::fs::canonicalize(p).is_ok_and(|p| p.starts_with(dir));
            if dir.is_dir()
                && !inside(&self.exposed)
                && !inside(spec.hidden)
                && !spec.home.is_some_and(above)
                && !spec.hidden.iter().any(|h| above(h))
                && !spec.credentials.iter().any(|c| dir.starts_with(c))
            {
                self.expose(dir, false, false)?;
            }
        }
        Ok(())
    }

    /// The project; over it, read-only, the shielded files granted to its commands and its
    /// `.git` programs; then what the shield hides, covered.
    fn project(&mut self) -> Result<(), ExecError> {
        let spec = self.spec;
        self.expose(spec.project, spec.project_writable, false)?;
        for g in spec.read_only.iter().filter(|g| g.starts_with(spec.project)) {
            let Ok(meta) = std::fs::symlink_metadata(g) else { continue };
            if meta.file_type().is_symlink() || g == spec.project {
                continue;
            }
            self.steps.push(read_only_at(g, &meta)?);
        }
        for c in spec.covered {
            self.steps.push(Step::Hide { dest: dest(&c.path)?, file: !c.dir, id: Some(c.id) });
        }
        Ok(())
    }

    /// Granted stores at their own path, not through [`View::expose`]'s canonicalization: a
    /// link along the path must not choose what is mounted (the child's open refuses one).
    fn granted(&mut self) -> Result<(), ExecError> {
        for g in self.spec.granted {
            let Ok(meta) = std::fs::symlink_metadata(g) else { continue };
            if self.is_exposed(g) || meta.file_type().is_symlink() {
                continue;
            }
            self.steps.push(read_only_at(g, &meta)?);
            self.exposed.push(g.clone());
        }
        Ok(())
    }

    /// Opted-in sockets: only a socket, found through the system's links (`/var/run` is `/run`),
    /// shown where the user named it and where it really is.
    fn sockets(&mut self) -> Result<(), ExecError> {
        use std::os::unix::fs::FileTypeExt;
        for named in self.spec.sockets {
            let Ok(real) = std::fs::canonicalize(named) else { continue };
            if !std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_socket()) {
                continue;
            }
            let mut at = vec![real.clone()];
            if named != &real {
                at.push(named.clone());
            }
            for at in at {
                if self.is_exposed(&at) || at.starts_with(JOB_VIEW) {
                    continue;
                }
                self.steps.push(Step::Bind {
                    src: cstr(real.as_os_str())?,
                    dest: dest(&at)?,
                    file: true,
                    writable: true,
                    devices: false,
                });
            }
        }
        Ok(())
    }

    /// The job's own folders at [`JOB_VIEW`], and the user's cargo home copy-on-write in them.
    fn job_state(&mut self) -> Result<Option<CargoHome<'a>>, ExecError> {
        let spec = self.spec;
        self.steps.push(Step::Bind {
            src: cstr(spec.state_dir.as_os_str())?,
            dest: dest(Path::new(JOB_VIEW))?,
            file: false,
            writable: true,
            devices: false,
        });
        let cargo_home = spec
            .cargo_home
            .and_then(|given| Some(CargoHome { given, real: std::fs::canonicalize(given).ok()? }));
        if let Some(c) = &cargo_home {
            self.steps.push(Step::Overlay {
                lower: cstr(c.real.as_os_str())?,
                dest: dest(&job_cargo())?,
                scratch: dest(Path::new(OVERLAY_SCRATCH))?,
            });
        }
        Ok(cargo_home)
    }

    /// What must stay hidden even beneath an exposed folder (outside the project), and in the
    /// job's copy of the cargo home.
    fn hidden(&mut self, cargo_home: Option<&CargoHome<'_>>) -> Result<(), ExecError> {
        let spec = self.spec;
        let ro_exposed: Vec<PathBuf> =
            self.exposed.iter().filter(|e| !e.starts_with(spec.project)).cloned().collect();
        for h in spec.credentials.iter().chain(spec.hidden) {
            let Ok(meta) = std::fs::symlink_metadata(h) else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            let file = !meta.is_dir();
            if ro_exposed.iter().any(|e| h.starts_with(e) && e != h) {
                self.steps.push(Step::Hide { dest: dest(h)?, file, id: None });
            }
            let in_cargo = cargo_home
                .and_then(|c| h.strip_prefix(c.given).or_else(|_| h.strip_prefix(&c.real)).ok());
            if let Some(rel) = in_cargo.filter(|r| !r.as_os_str().is_empty()) {
                self.steps.push(Step::Hide { dest: dest(&job_cargo().join(rel))?, file, id: None });
            }
        }
        Ok(())
    }
}

/// Where the job sees its copy of the user's cargo home.
fn job_cargo() -> PathBuf {
    Path::new(JOB_VIEW).join("cargo")
}

/// A read-only bind of `at` onto itself (a path the parent checked holds no link).
fn read_only_at(at: &Path, meta: &std::fs::Metadata) -> Result<Step, ExecError> {
    Ok(Step::Bind {
        src: cstr(at.as_os_str())?,
        dest: dest(at)?,
        file: !meta.is_dir(),
        writable: false,
        devices: false,
    })
}
