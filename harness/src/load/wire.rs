//! The load generator's own HTTP/1.1 connections for picture fetches, as wrk keeps them: each
//! worker owns one kept-alive connection (no pool to check out of, no transcript, the request's
//! headers built once per run). A connection
//! idle longer than [`IDLE_REUSE`] is not used again (a server may close it after its header timeout,
//! SPEC 1.11), and one the server closed is replaced by a new one on the next request.

use std::time::Instant;

use bytes::Bytes;
use http::{HeaderValue, Request, Uri, header};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::http::{HttpError, IDLE_REUSE};

/// Where requests go and the headers every request carries.
#[derive(Debug, Clone)]
pub struct Wire {
    authority: String,
    host: HeaderValue,
    authorization: Option<HeaderValue>,
}

/// One connection (or none yet).
#[derive(Default)]
pub struct Conn {
    live: Option<Live>,
}

struct Live {
    sender: SendRequest<Empty<Bytes>>,
    idle: Instant,
}

impl Wire {
    /// For the server at `base` (`http://host:port`), sending `Authorization: Bearer key` when given.
    pub fn new(base: &str, key: Option<&str>) -> Result<Self, HttpError> {
        let uri: Uri = base.parse().map_err(|_| HttpError::Build(format!("{base} is not a URL")))?;
        let authority = uri.authority().ok_or_else(|| HttpError::Build(format!("{base} names no host")))?;
        let port = authority.port_u16().unwrap_or(80);
        let host = HeaderValue::from_str(authority.as_str()).map_err(|e| HttpError::Build(e.to_string()))?;
        let authorization = key
            .map(|key| HeaderValue::from_str(&format!("Bearer {key}")))
            .transpose()
            .map_err(|e| HttpError::Build(e.to_string()))?;
        Ok(Wire { authority: format!("{}:{port}", authority.host()), host, authorization })
    }

    /// The path of a request (`/tool-media/<name>`), parsed once.
    pub fn path(target: &str) -> Result<Uri, HttpError> {
        target.parse().map_err(|_| HttpError::Build(format!("{target} is not a request target")))
    }

    async fn connect(&self) -> Result<Live, HttpError> {
        let stream =
            TcpStream::connect(self.authority.as_str()).await.map_err(|e| HttpError::Connect(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) =
            http1::handshake(TokioIo::new(stream)).await.map_err(|e| HttpError::Connect(e.to_string()))?;
        // The connection's I/O runs as a task of its own: measured against driving it in the worker's
        // task beside each request (one task a connection), this gave more requests a second on two
        // cores, at 32 and at 256 connections alike.
        tokio::spawn(connection);
        Ok(Live { sender, idle: Instant::now() })
    }

    /// `GET path` on `conn` (connecting first when it has no usable connection): every chunk of the
    /// answer's body goes to `chunk` with the answer's status, as it arrives. Returns the status. The
    /// connection is kept for the next request when the body ended with the connection still open.
    pub async fn fetch(
        &self,
        conn: &mut Conn,
        path: &Uri,
        mut chunk: impl FnMut(u16, &[u8]),
    ) -> Result<u16, HttpError> {
        let reusable = conn.live.take().filter(|live| !live.sender.is_closed() && live.idle.elapsed() < IDLE_REUSE);
        let mut live = match reusable {
            Some(live) => live,
            None => self.connect().await?,
        };
        if live.sender.ready().await.is_err() {
            live = self.connect().await?;
            live.sender.ready().await.map_err(|e| HttpError::Connect(e.to_string()))?;
        }
        let mut request = Request::get(path.clone());
        if let Some(headers) = request.headers_mut() {
            headers.insert(header::HOST, self.host.clone());
            if let Some(authorization) = &self.authorization {
                headers.insert(header::AUTHORIZATION, authorization.clone());
            }
        }
        let request = request.body(Empty::new()).map_err(|e| HttpError::Build(e.to_string()))?;
        let response = live.sender.send_request(request).await.map_err(|e| HttpError::Connect(e.to_string()))?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| HttpError::Body(e.to_string()))?;
            if let Some(data) = frame.data_ref() {
                chunk(status, data);
            }
        }
        live.idle = Instant::now();
        conn.live = Some(live);
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_and_key_headers_are_built_once_from_the_base() {
        let wire = Wire::new("http://127.0.0.1:8080", Some("k")).expect("wire");
        assert_eq!(wire.authority, "127.0.0.1:8080");
        assert_eq!(wire.host, "127.0.0.1:8080");
        assert_eq!(wire.authorization.as_ref().map(|v| v.to_str().ok()), Some(Some("Bearer k")));
        let plain = Wire::new("http://localhost", None).expect("wire");
        assert_eq!((plain.authority.as_str(), plain.authorization), ("localhost:80", None));
        assert_eq!(Wire::new("http://[::1]:9/", None).expect("wire").authority, "[::1]:9");
        assert!(Wire::new("not a url", None).is_err());
        assert!(Wire::new("http://127.0.0.1:1", Some("bad\nkey")).is_err());
    }
}
