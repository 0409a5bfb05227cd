//! TA-02: does the time to refuse a token depend on where it differs from a real one? Wrong
//! first byte against wrong last byte, sent in adjacent pairs (which goes first alternates),
//! paced under the failed-auth throttle. Tokens are looked up by a keyed hash, so the plaintext
//! is never compared; the statistics check that nothing else leaks either.
//!
//! The assertion that runs in the test command is a sign test over the pairs: under no leak,
//! which of the two in a pair took longer is a coin toss, whatever the machine's noise (a burst
//! of load slows both alike), so |z| ≥ 4 (p < 10⁻⁴) means the position of the difference shows.
//! It catches a leak that decides most pairs, a difference above the jitter between two
//! requests a millisecond apart (tens of microseconds here), not a nanosecond one: the finer
//! proof is `cargo xtask attack --long`, thousands of pairs and also Welch's |t| < 4.5.

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

/// The sign test's z over paired differences: how far the count of pairs the first sample
/// lost is from half of the pairs that were not ties.
fn sign_z(pairs: &[(f64, f64)]) -> f64 {
    let longer = pairs.iter().filter(|(a, b)| a > b).count() as f64;
    let decided = pairs.iter().filter(|(a, b)| a != b).count() as f64;
    (longer - decided / 2.0) / (decided / 4.0).sqrt()
}

fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[test]
fn ta02_refusal_time_does_not_depend_on_where_a_token_differs() {
    let rig = Rig::new("off");
    let pairs_wanted = scale(150, 4000);
    let first = flipped(&rig.token, 4);
    let last = flipped(&rig.token, rig.token.len() - 1);
    let body = initialize_body();
    // One refusal's time in µs, or `None` when the failed-auth throttle answered (then wait
    // as it says; the pair is dropped).
    let refusal = |token: &str| {
        let started = Instant::now();
        let reply = post(rig.port, &bearer(token), &body);
        let took = started.elapsed().as_secs_f64() * 1e6;
        match reply.status {
            401 => Some(took),
            429 => {
                std::thread::sleep(Duration::from_millis(200));
                None
            }
            s => panic!("a wrong token got {s}: {}", reply.body),
        }
    };
    let mut pairs = Vec::new();
    let mut i = 0usize;
    while pairs.len() < pairs_wanted {
        assert!(i < pairs_wanted * 20, "the throttle let only {} pairs through", pairs.len());
        // Alternate which goes first, so an order effect cancels out.
        let pair = if i.is_multiple_of(2) {
            refusal(&first).zip(refusal(&last))
        } else {
            refusal(&last).zip(refusal(&first)).map(|(b, a)| (a, b))
        };
        pairs.extend(pair);
        i += 1;
    }
    let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let (z, t) = (sign_z(&pairs), welch_t(&a, &b));
    eprintln!(
        "TA-02: {} pairs, median {:.0} µs (first byte wrong) vs {:.0} µs (last byte wrong), \
         mean {:.0} vs {:.0} µs; sign test z = {z:.2}, Welch t = {t:.2}",
        pairs.len(),
        median(&a),
        median(&b),
        mean_var(&a).0,
        mean_var(&b).0,
    );
    assert!(z.abs() < 4.0, "refusal time depends on where the token differs: sign z = {z:.2}");
    if pairs_wanted >= 1000 {
        assert!(t.abs() < 4.5, "refusal time depends on the token's content: t = {t:.2}");
    }
    rig.finish(&[&first, &last]);
}
