//! `read_media`, the tool for what `read_file` refuses: its result is more than structured
//! output — the picture as MCP image content, or a byte range as an embedded blob resource named
//! `sluice://<project id>/<path>` (never a physical path) — with a line saying what came back.
//! The decoding and its bounds are the runner's (`sluice_runner::read_media`); here it runs on a
//! blocking thread ([`Work::Decode`]).

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use rmcp::{ErrorData, tool, tool_router};
use sluice_core::Failure;
use sluice_engine::{Caller, ProjectHandle};
use sluice_runner::{Media, MediaKind, ReadMediaArgs, ReadMediaOutput};

use crate::server::{ProjectCall, SluiceServer, Work, failed, result_meta};

#[tool_router(router = media_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Look at an image of a project, or read bytes of a binary file. A PNG, \
        JPEG, GIF (first frame) or WebP — known by its content — comes back as an image you can \
        see, scaled down so its longest side is at most `max_dimension` (default 1568 px), with \
        its original size. Any other binary file comes back as a base64 blob of `length` bytes \
        from `offset` (at most 1 MiB a call) with the next offset. Text files, SVG included, \
        are refused: use read_file.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReadMediaOutput>()
    )]
    async fn read_media(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<ReadMediaArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        let work = move |p: &ProjectHandle| {
            sluice_runner::read_media(&p.workspace, &args).map(|media| (p.id.clone(), media))
        };
        self.in_project_as(&caller, &call.project, Work::Decode, work, |(project, media)| {
            media_result(&project, media)
        })
        .await
    }
}

/// `read_media`'s result: the picture as image content or the bytes as an embedded blob
/// resource (named `sluice://<project id>/<path>`, never a physical path), a line saying what
/// was returned, and the same as structured content.
fn media_result(project: &sluice_core::ProjectId, media: Media) -> CallToolResult {
    use base64::Engine as _;
    let Media { output, data } = media;
    let blob = base64::engine::general_purpose::STANDARD.encode(&data);
    let (content, summary) = match output.kind {
        MediaKind::Image => (
            ContentBlock::image(blob, output.mime.clone()),
            format!(
                "{}: {} image, {}x{} px, {} bytes; returned as {} at {}x{} px",
                output.path,
                output.source_mime.as_deref().unwrap_or("unknown"),
                output.width.unwrap_or(0),
                output.height.unwrap_or(0),
                output.size,
                output.mime,
                output.returned_width.unwrap_or(0),
                output.returned_height.unwrap_or(0),
            ),
        ),
        MediaKind::Bytes => {
            let offset = output.offset.unwrap_or(0);
            let uri = format!("sluice://{}/{}", project.as_str(), uri_path(&output.path));
            let resource = ResourceContents::BlobResourceContents {
                uri,
                mime_type: Some(output.mime.clone()),
                blob,
                meta: None,
            };
            let next = match output.next_offset {
                Some(next) => format!("; continue at offset {next}"),
                None => "; that is the end of the file".to_owned(),
            };
            let masked = if output.redacted { "; known secrets masked with *" } else { "" };
            (
                ContentBlock::resource(resource),
                format!(
                    "{}: {}, {} bytes in all; returned bytes {}..{} ({} bytes){next}{masked}",
                    output.path,
                    output.mime,
                    output.size,
                    offset,
                    offset + output.length,
                    output.length,
                ),
            )
        }
    };
    let mut result = CallToolResult::success(vec![content, ContentBlock::text(summary)]);
    match serde_json::to_value(&output) {
        Ok(value) => result.structured_content = Some(value),
        Err(err) => {
            tracing::error!(%err, "read_media output did not serialize");
            return failed(&Failure::internal());
        }
    }
    result.meta = Some(result_meta());
    result
}

/// A project-relative path as a URI path: every byte but unreserved characters and `/`
/// percent-encoded, so any file name makes a valid URI.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
