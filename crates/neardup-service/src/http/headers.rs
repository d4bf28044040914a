//! The security headers of every answer (issue 44, item 7): a `Content-Security-Policy`,
//! `X-Content-Type-Options: nosniff` and `X-Frame-Options: DENY`.
//!
//! The API answers JSON and text that no browser should run or frame: its policy allows
//! nothing (`default-src 'none'`). The console is one page with one inline `<script>` and one
//! inline `<style>`: its policy allows the same origin (the API it calls), and of inline code
//! exactly those two blocks, by their SHA-256 hashes (computed from the page served, so an
//! edit of the page cannot leave a stale hash). No `'unsafe-inline'`: an injected script or
//! `on...=` attribute does not run. Both policies forbid framing (`frame-ancestors 'none'`, and
//! `X-Frame-Options: DENY` for browsers that do not read it).

use std::sync::LazyLock;

use axum::http::header::{
    HeaderValue, CONTENT_SECURITY_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::response::Response;
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The policy of every answer but the console's.
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; \
                          form-action 'none'";

/// The console's policy: the same origin, its inline script and style by hash, no framing.
pub(super) static CONSOLE_POLICY: LazyLock<HeaderValue> = LazyLock::new(|| {
    let script = inline_hash(super::CONSOLE, "script");
    let style = inline_hash(super::CONSOLE, "style");
    let policy = format!(
        "default-src 'self'; script-src '{script}'; style-src '{style}'; img-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    );
    // A base64 hash and fixed ASCII: always a valid header value.
    HeaderValue::from_str(&policy).unwrap_or(HeaderValue::from_static(API_POLICY))
});

/// The CSP source of the content of the first `<tag>` element of `page`: `sha256-<base64>`
/// of the bytes between `<tag>` and `</tag>`, as browsers hash an inline block.
fn inline_hash(page: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let content = page
        .split_once(&open)
        .and_then(|(_, rest)| rest.split_once(&close))
        .map_or("", |(content, _)| content);
    let digest = Sha256::digest(content.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Adds the security headers to an answer; a policy the handler set (the console's) is kept.
pub(super) async fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(API_POLICY));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_runs_only_the_inline_blocks_its_policy_names() {
        let page = super::super::CONSOLE;
        // One script and one style block: the policy names each by hash, and anything else
        // inline (a second block, an event handler, a style attribute) would be refused.
        assert_eq!(page.matches("<script").count(), 1);
        assert_eq!(page.matches("<style").count(), 1);
        let lower = page.to_ascii_lowercase();
        for attribute in [
            " onclick=",
            " onload=",
            " onerror=",
            " onsubmit=",
            " style=",
        ] {
            assert!(!lower.contains(attribute), "{attribute}");
        }
        assert!(!lower.contains("javascript:"));
        let policy = CONSOLE_POLICY.to_str().unwrap();
        assert!(policy.contains(&format!("script-src '{}'", inline_hash(page, "script"))));
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(!policy.contains("unsafe"), "{policy}");
    }

    #[test]
    fn the_console_keeps_the_token_out_of_local_storage() {
        let page = super::super::CONSOLE;
        assert!(page.contains("sessionStorage.setItem(\"neardup-token\""));
        assert!(!page.contains("localStorage.setItem"));
        assert!(!page.contains("localStorage.getItem"));
    }

    #[test]
    fn an_inline_hash_is_the_sha256_of_the_block_as_browsers_take_it() {
        // `python3 -c "import hashlib, base64; print(base64.b64encode(hashlib.sha256(b'alert(1)')
        // .digest()).decode())"`
        assert_eq!(
            inline_hash("<p><script>alert(1)</script>", "script"),
            "sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI="
        );
    }
}
