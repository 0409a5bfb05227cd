//! Whether a job fits the concurrency limits now: what both [`registry`](super::registry) (a
//! new job starts now or is queued) and [`supervisor`](super::supervisor) (a finished job makes
//! room for queued ones) ask, so neither has to reach into the other for it.

use super::{JobLimits, JobState, Registry};

/// How many jobs are running, of `project` or of every project.
pub(super) fn running(reg: &Registry, project: Option<&str>) -> usize {
    reg.jobs
        .values()
        .filter(|j| *j.state.borrow() == JobState::Running)
        .filter(|j| project.is_none_or(|p| j.project == p))
        .count()
}

/// Whether one more job of `project` may run now (the overall and the per-project limits).
pub(super) fn can_run(reg: &Registry, limits: &JobLimits, project: &str) -> bool {
    running(reg, None) < limits.max_running
        && running(reg, Some(project)) < limits.max_running_per_project
}
