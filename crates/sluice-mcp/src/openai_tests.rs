//! The poller's parsing and policy: deadlines, poll answers, refusals, event streams, headers.

use super::*;

#[test]
fn response_timeouts_follow_the_protocols_grammar_and_fail_open() {
    let t = |v: Value| response_timeout(Some(&v));
    assert_eq!(t(json!("30s")), Some(Duration::from_secs(30)));
    assert_eq!(t(json!("4500ms")), Some(Duration::from_millis(4500)));
    assert_eq!(t(json!("0s")), Some(Duration::ZERO));
    assert_eq!(t(json!("2m")), Some(Duration::from_secs(120)));
    assert_eq!(t(json!("7us")), Some(Duration::from_micros(7)));
    for bad in ["4.5s", "-1s", "+1s", "1m30s", " 1s", "1s ", "1e3s", "30d", "s", "", "1S"] {
        assert_eq!(t(json!(bad)), None, "{bad:?}");
    }
    assert_eq!(t(json!("999999999999999999999999h")), None);
    assert_eq!(t(json!("99999999999h")), None, "overflowing the nanoseconds");
    assert_eq!(t(json!(30)), None);
    assert_eq!(t(Value::Null), None);
    assert_eq!(response_timeout(None), None);
}

#[test]
fn a_poll_answer_is_read_command_by_command() {
    let body = br#"{"commands":[{"request_id":"a"},7,{"request_id":"b"}],"more":1}"#;
    assert_eq!(commands(body).len(), 3, "each is judged on its own when processed");
    assert!(commands(b"[1,2]").is_empty());
    assert!(commands(b"{\"commands\":{}}").is_empty());
    assert!(commands(b"not json").is_empty());
}

#[test]
fn a_refused_key_waits_for_the_person_and_a_busy_service_for_its_hint() {
    let answer = |status: u16, retry: Option<&str>| {
        let mut headers = HeaderMap::new();
        if let Some(r) = retry {
            headers.insert(header::RETRY_AFTER, r.parse().unwrap());
        }
        Answer { status: StatusCode::from_u16(status).unwrap(), headers, body: Bytes::new() }
    };
    let (wait, why) = refusal(&answer(401, None), "tunnel_x");
    assert_eq!(wait, REFUSED_PAUSE);
    assert!(why.contains("API key") && why.contains("401"), "{why}");
    assert_eq!(refusal(&answer(404, None), "t").0, REFUSED_PAUSE);
    assert_eq!(refusal(&answer(429, Some("7")), "t").0, Duration::from_secs(7));
    assert_eq!(refusal(&answer(503, Some("86400")), "t").0, MAX_BACKOFF, "capped");
    assert_eq!(refusal(&answer(502, Some("soon")), "t").0, FIRST_BACKOFF, "ignored");
}

#[tokio::test]
async fn server_sent_events_yield_their_json_messages() {
    let stream = ": keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\r\nevent: message\ndata: {\"id\":1,\ndata: \"result\":{}}\n\ndata: not json\n\n";
    let mut events = Events::new(Body::from(stream));
    assert_eq!(events.next().await, Some(json!({"jsonrpc":"2.0","method":"n"})));
    assert_eq!(events.next().await, Some(json!({"id":1,"result":{}})));
    assert_eq!(events.next().await, None);
}

#[test]
fn only_mcps_own_headers_are_taken_from_a_command_once_each() {
    let command = json!({ "headers": {
        "MCP-Protocol-Version": ["2026-07-28"],
        "Mcp-Method": ["tools/call"],
        "mcp-name": ["a", "b"],
        "Authorization": ["Bearer slc_x"],
    }});
    assert_eq!(protocol_header(&command, "mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(protocol_header(&command, "mcp-method"), Some("tools/call"));
    assert_eq!(protocol_header(&command, "mcp-name"), None, "given twice");
    assert_eq!(protocol_header(&command, "authorization"), Some("Bearer slc_x"));
    let odd = json!({ "headers": { "mcp-method": ["a\r\nx: y"], "Mcp-Method ": ["b"] } });
    assert_eq!(protocol_header(&odd, "mcp-method"), None);
    let twice = json!({ "headers": { "mcp-method": ["a"], "MCP-METHOD": ["b"] } });
    assert_eq!(protocol_header(&twice, "mcp-method"), None);
    assert!(!FORWARDED.iter().any(|h| h.eq_ignore_ascii_case("authorization")));
}

#[test]
fn a_failure_carries_only_the_protocols_bounded_provenance() {
    let f = failure(json!(3), 401, "target_http");
    assert_eq!(f["id"], 3);
    assert_eq!(f["error"]["code"], -32603);
    assert_eq!(f["error"]["data"]["tunnel_failure"]["upstream_status"], 401);
    let f = failure(json!("a"), 502, "transport_closed");
    assert_eq!(f["error"]["data"]["tunnel_failure"]["upstream_response_received"], false);
    assert!(f["error"]["data"]["tunnel_failure"].get("upstream_status").is_none());
}
