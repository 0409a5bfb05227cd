//! CPU and memory samples of every running job's process tree, taken on one thread while the
//! registry exists.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::{Inner, Job, JobEvent, JobState, Sample, lock};

use crate::kill;

/// Samples CPU and memory of every running job's tree while the registry exists.
pub(super) fn start_sampler(inner: Weak<Inner>, every: Duration) {
    let _ = std::thread::Builder::new().name("sluice-job-sampler".into()).spawn(move || {
        use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
        let mut sys = System::new().ok();
        loop {
            std::thread::sleep(every);
            let Some(inner) = inner.upgrade() else { return };
            let running: Vec<Arc<Job>> = {
                let reg = lock(&inner.reg);
                reg.jobs
                    .values()
                    .filter(|j| *j.state.borrow() == JobState::Running)
                    .cloned()
                    .collect()
            };
            let Some(sys) = sys.as_mut() else { continue };
            for job in running {
                let Some(tree) = lock(&job.data).tree else { continue };
                let pids: Vec<Pid> =
                    kill::tree_pids(&tree).into_iter().map(Pid::from_u32).collect();
                sys.refresh_processes_specifics(
                    ProcessesToUpdate::Some(&pids),
                    true,
                    ProcessRefreshKind::nothing().with_cpu().with_memory(),
                );
                let (cpu, mem) = pids
                    .iter()
                    .filter_map(|p| sys.process(*p))
                    .fold((0.0f32, 0u64), |(c, m), p| (c + p.cpu_usage(), m + p.memory()));
                let sample = Sample { cpu_percent: cpu, memory_bytes: mem, processes: pids.len() };
                lock(&job.data).sample = Some(sample);
                let _ = inner.events.send(JobEvent::Sample { id: job.id.clone(), sample });
            }
        }
    });
}
