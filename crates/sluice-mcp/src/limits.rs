//! Per-caller request limits: a token bucket for the request rate and a semaphore for requests in
//! flight, plus one global bucket for failed authentications (TA-05). A caller is a local token,
//! or a hosted client with all its tokens (`Caller::limit_key`). Memory stays bounded: only
//! authenticated callers get a slot, and there are as many of those as the user created or
//! approved.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Limits applied to every token. Defaults suit one assistant working fast, not a flood.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Sustained requests per second per token.
    pub rate_per_sec: f64,
    /// Requests a token may make in a burst above the sustained rate.
    pub burst: f64,
    /// Requests a token may have in flight at once.
    pub concurrency: usize,
    /// Failed authentications per second across all clients before Sluice answers 429.
    pub auth_failures_per_sec: f64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { rate_per_sec: 200.0, burst: 400.0, concurrency: 16, auth_failures_per_sec: 20.0 }
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(capacity: f64) -> Bucket {
        Bucket { tokens: capacity, at: Instant::now() }
    }

    /// Takes one token, or says how long until one is available.
    fn take(&mut self, rate: f64, capacity: f64) -> Result<(), Duration> {
        let now = Instant::now();
        let elapsed = now.duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate).min(capacity);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / rate))
        }
    }
}

struct Slot {
    bucket: Bucket,
    in_flight: Arc<Semaphore>,
}

/// Why a request was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over the rate; retry after this long.
    Rate(Duration),
    /// Too many requests in flight.
    Concurrency,
}

pub struct Limiter {
    limits: Limits,
    slots: Mutex<HashMap<String, Slot>>,
    auth_failures: Mutex<Bucket>,
}

impl Limiter {
    pub fn new(limits: Limits) -> Limiter {
        Limiter {
            limits,
            slots: Mutex::new(HashMap::new()),
            auth_failures: Mutex::new(Bucket::full(limits.auth_failures_per_sec * 2.0)),
        }
    }

    /// Admits one request for the caller `key`; the permit must live as long as the request.
    pub fn admit(&self, key: &str) -> Result<OwnedSemaphorePermit, Refusal> {
        let Limits { rate_per_sec, burst, concurrency, .. } = self.limits;
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots.entry(key.to_owned()).or_insert_with(|| Slot {
            bucket: Bucket::full(burst),
            in_flight: Arc::new(Semaphore::new(concurrency)),
        });
        slot.bucket.take(rate_per_sec, burst).map_err(Refusal::Rate)?;
        slot.in_flight.clone().try_acquire_owned().map_err(|_| Refusal::Concurrency)
    }

    /// Records a failed authentication; `Err` means failures are arriving too fast.
    pub fn auth_failed(&self) -> Result<(), Duration> {
        let rate = self.limits.auth_failures_per_sec;
        self.auth_failures.lock().unwrap_or_else(|e| e.into_inner()).take(rate, rate * 2.0)
    }
}

/// Sources remembered by a [`SourceBudget`] before the ones back at a full bucket are forgotten.
const MAX_SOURCES: usize = 4096;

/// A token bucket per source (the client address a tunnel reports) for the unauthenticated
/// OAuth endpoints, so one source's flood spends its own budget and not everyone's. A source
/// whose bucket has refilled is forgotten: it is the same as a new one.
pub struct SourceBudget {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl SourceBudget {
    pub fn new(rate: f64, burst: f64) -> SourceBudget {
        SourceBudget { rate, burst, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one request from `source`'s budget, or says how long until it has one.
    pub fn take(&self, source: &str) -> Result<(), Duration> {
        let (rate, burst) = (self.rate, self.burst);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_SOURCES && !buckets.contains_key(source) {
            let now = Instant::now();
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
            if buckets.len() >= MAX_SOURCES {
                // Only a flood from thousands of sources at once gets here; the global budget
                // still holds it.
                buckets.clear();
            }
        }
        buckets.entry(source.to_owned()).or_insert_with(|| Bucket::full(burst)).take(rate, burst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_concurrency_are_enforced_per_token() {
        let limiter = Limiter::new(Limits {
            rate_per_sec: 0.001,
            burst: 3.0,
            concurrency: 2,
            auth_failures_per_sec: 1.0,
        });
        let (a, b) = ("slt_a", "oauth:slcl_b");
        let p1 = limiter.admit(a).unwrap();
        let _p2 = limiter.admit(a).unwrap();
        assert_eq!(limiter.admit(a).unwrap_err(), Refusal::Concurrency);
        drop(p1);
        assert!(matches!(limiter.admit(a).unwrap_err(), Refusal::Rate(_)));
        // Another token is unaffected.
        assert!(limiter.admit(b).is_ok());
        assert!(limiter.auth_failed().is_ok());
        assert!(limiter.auth_failed().is_ok());
        assert!(limiter.auth_failed().is_err());
    }

    #[test]
    fn one_source_spends_only_its_own_budget() {
        let budget = SourceBudget::new(0.001, 3.0);
        for _ in 0..3 {
            assert!(budget.take("203.0.113.9").is_ok());
        }
        assert!(budget.take("203.0.113.9").is_err());
        assert!(budget.take("198.51.100.7").is_ok());
    }
}
