//! TA-02: does the time to refuse a token depend on where it differs from a real one? Wrong
//! first byte against wrong last byte, interleaved, paced under the failed-auth throttle, and
//! compared with Welch's t-test. Tokens are looked up by a keyed hash, so the plaintext is never
//! compared; the statistic checks that nothing else leaks either. The test command takes a small
//! sample and asserts the refusals; `cargo xtask attack --long` takes thousands and asserts
//! |t| < 4.5 (the figure goes in the closing note).

use std::time::{Duration, Instant};

use super::{Rig, scale};
use crate::harness::{bearer, initialize_body, post};

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's t statistic for two samples.
fn welch_t(a: &[f64], b: &[f64]) -> f64 {
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    (ma - mb) / (va / a.len() as f64 + vb / b.len() as f64).sqrt()
}

/// The real token with one character changed at `at`.
fn flipped(token: &str, at: usize) -> String {
    let mut bytes = token.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn ta02_refusal_time_does_not_depend_on_where_a_token_differs() {
    let rig = Rig::new("off");
    let samples = scale(60, 4000);
    let first = flipped(&rig.token, 4);
    let last = flipped(&rig.token, rig.token.len() - 1);
    let body = initialize_body();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..samples * 2 {
        let token = if i % 2 == 0 { &first } else { &last };
        let started = Instant::now();
        let reply = post(rig.port, &bearer(token), &body);
        let took = started.elapsed().as_secs_f64() * 1e6;
        match reply.status {
            401 => {
                if i % 2 == 0 {
                    a.push(took)
                } else {
                    b.push(took)
                }
            }
            // The failed-auth throttle: wait as it says and go on (the sample is dropped).
            429 => std::thread::sleep(Duration::from_millis(200)),
            s => panic!("a wrong token got {s}: {}", reply.body),
        }
    }
    assert!(a.len() >= samples / 2 && b.len() >= samples / 2, "{} / {}", a.len(), b.len());
    let t = welch_t(&a, &b);
    let (ma, mb) = (mean_var(&a).0, mean_var(&b).0);
    eprintln!(
        "TA-02: {} + {} refusals, mean {ma:.0} µs (first byte wrong) vs {mb:.0} µs (last byte \
         wrong), Welch t = {t:.2}",
        a.len(),
        b.len()
    );
    if samples >= 1000 {
        assert!(t.abs() < 4.5, "refusal time depends on the token's content: t = {t:.2}");
    }
    rig.finish(&[&first, &last]);
}
