//! The in-process server (`reference_server::start`, what `mediacheck run` embeds): `stop` stops it.

mod support;

#[tokio::test]
async fn a_stopped_server_no_longer_takes_connections() {
    let running = support::start(serde_json::json!({})).await;
    let addr = running.server.addr;
    let health = support::client().get(running.url("/health")).send().await.expect("health answers");
    assert_eq!(health.status(), 200);
    running.server.stop().await;
    let after = tokio::net::TcpStream::connect(addr).await;
    assert!(after.is_err(), "{addr} still takes connections after stop()");
}
