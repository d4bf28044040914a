//! Connections: the accept loop, its timeouts and its limit.
//!
//! `axum::serve` keeps a connection as long as the client does, so idle or half-sent
//! connections pile up until the process runs out of file descriptors and nobody is served.
//! This loop bounds every connection:
//!
//! - **idle timeout**: a connection waiting for its first request, or for the next one after an
//!   answer, is closed after `idle_timeout`;
//! - **header timeout**: once the first byte of a request arrives, its whole head must arrive
//!   within `header_timeout`;
//! - **body timeout**: a request body that sends no byte for `body_timeout` is answered 408;
//! - **connection limit**: at most `max_connections` are open. At the limit a new connection
//!   closes the idlest idle one (waiting for a request, or holding a half-sent head) to make
//!   room, so a crowd of idle connections cannot lock clients out; when every connection has
//!   a request in flight, new ones wait in the listen queue.
//!
//! A request in flight is never cut: on shutdown, idle connections are closed at once and busy
//! ones after their answer ([`serve`] then closes the collections).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::{Instant, Sleep};

/// The most connections by default, whatever the descriptor limit.
pub const MAX_CONNECTIONS_CAP: usize = 10_000;

/// How long and how many connections are kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub body_timeout: Duration,
}

/// Raises this process's soft limit of open files to its hard limit (each connection, each
/// collection's segments and its lock hold one); the soft limit in effect afterwards, `None`
/// when it cannot be read.
pub fn raise_open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed by pointer, which
    // lives on this stack frame for the whole call.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform.
    Some(limit.rlim_cur as u64)
}

/// The soft limit of open files of this process, if it can be read.
pub fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: as in `raise_open_files_limit`.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform.
    (read == 0).then_some(limit.rlim_cur as u64)
}

/// The default connection limit: half the open-files limit (the other half is left to the
/// collections' files), at most 10,000 (`MAX_CONNECTIONS_CAP`), at least 16.
pub fn default_max_connections() -> usize {
    let files = open_files_limit().unwrap_or(1024);
    usize::try_from(files / 2)
        .unwrap_or(usize::MAX)
        .clamp(16, MAX_CONNECTIONS_CAP)
}

/// The request body stopped: no byte for the body timeout.
#[derive(Debug)]
pub(crate) struct BodyStalled(pub Duration);

impl std::fmt::Display for BodyStalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no byte of the request body arrived for {} s (--body-timeout)",
            self.0.as_secs_f64()
        )
    }
}

impl std::error::Error for BodyStalled {}

/// One connection's state, shared by its task, its requests and the accept loop.
struct Connection {
    state: Mutex<State>,
    /// Signalled when the state changes.
    wake: Notify,
}

struct State {
    /// Requests whose answer is not yet handed to the connection.
    busy: usize,
    /// When the connection last became idle (opened, or an answer was handed over).
    idle_since: Instant,
    /// When the first byte of the next request's head arrived, while idle.
    head_since: Option<Instant>,
    /// Close as soon as no request is in flight (shutdown, or room for a new connection).
    closing: bool,
}

/// What a connection's task does next.
enum Step {
    Close,
    Wait {
        deadline: Option<Instant>,
        closing: bool,
    },
}

impl Connection {
    fn new() -> Connection {
        Connection {
            state: Mutex::new(State {
                busy: 0,
                idle_since: Instant::now(),
                head_since: None,
                closing: false,
            }),
            wake: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(&self) {
        let mut state = self.state();
        state.busy += 1;
        state.head_since = None;
    }

    fn finish(&self) {
        {
            let mut state = self.state();
            state.busy = state.busy.saturating_sub(1);
            if state.busy == 0 {
                state.idle_since = Instant::now();
                state.head_since = None;
            }
        }
        self.wake.notify_one();
    }

    fn bytes_arrived(&self) {
        let started = {
            let mut state = self.state();
            let starts = state.busy == 0 && state.head_since.is_none();
            if starts {
                state.head_since = Some(Instant::now());
            }
            starts
        };
        if started {
            self.wake.notify_one();
        }
    }

    fn close_when_idle(&self) {
        self.state().closing = true;
        self.wake.notify_one();
    }

    fn step(&self, limits: &Limits) -> Step {
        let state = self.state();
        if state.busy > 0 {
            return Step::Wait {
                deadline: None,
                closing: state.closing,
            };
        }
        if state.closing {
            return Step::Close;
        }
        let deadline = match state.head_since {
            Some(head) => head + limits.header_timeout,
            None => state.idle_since + limits.idle_timeout,
        };
        if deadline <= Instant::now() {
            Step::Close
        } else {
            Step::Wait {
                deadline: Some(deadline),
                closing: false,
            }
        }
    }
}

/// The open connections, for the limit and for shutdown.
#[derive(Default)]
struct Registry {
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
}

impl Registry {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self) -> (u64, Arc<Connection>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection::new());
        self.open().insert(id, Arc::clone(&connection));
        (id, connection)
    }

    fn remove(&self, id: u64) {
        self.open().remove(&id);
    }

    /// Asks the connection idle for longest to close; false when none is idle.
    fn evict_idlest(&self) -> bool {
        let open = self.open();
        let idlest = open
            .values()
            .filter_map(|connection| {
                let state = connection.state();
                (state.busy == 0 && !state.closing).then_some((state.idle_since, connection))
            })
            .min_by_key(|(since, _)| *since);
        match idlest {
            Some((_, connection)) => {
                connection.close_when_idle();
                true
            }
            None => false,
        }
    }

    fn close_all(&self) {
        for connection in self.open().values() {
            connection.close_when_idle();
        }
    }
}

/// Accepts connections on `listener` and serves `router` on each until `shutdown` completes;
/// then closes idle connections, lets the requests in flight finish, and returns.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let max = limits.max_connections.clamp(1, u32::MAX as usize);
    let permits = Arc::new(Semaphore::new(max));
    let registry = Arc::new(Registry::default());
    let service = TowerToHyperService::new(router);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
        };
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                registry.evict_idlest();
                tokio::select! {
                    () = &mut shutdown => break,
                    permit = Arc::clone(&permits).acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let (id, connection) = registry.add();
        let registry = Arc::clone(&registry);
        let service = service.clone();
        tokio::spawn(async move {
            run(stream, service, Arc::clone(&connection), limits).await;
            registry.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    registry.close_all();
    // Every connection holds a permit until it is closed.
    let _ = permits.acquire_many(max as u32).await;
}

/// Waits after a failed accept: at the descriptor limit (EMFILE, ENFILE) accepting again at
/// once would spin until a connection closes.
async fn accept_failed(error: &io::Error) {
    let per_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    );
    if !per_connection {
        static LAST_LOG: Mutex<Option<std::time::Instant>> = Mutex::new(None);
        {
            let mut last = LAST_LOG.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
                eprintln!("neardup: cannot accept connections: {error} (retrying)");
                *last = Some(std::time::Instant::now());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Serves one connection until the client closes it, a timeout or the limit closes it, or
/// shutdown closes it after its requests in flight.
async fn run(
    stream: TcpStream,
    router: TowerToHyperService<Router>,
    connection: Arc<Connection>,
    limits: Limits,
) {
    let io = TokioIo::new(Watched {
        stream,
        connection: Arc::clone(&connection),
    });
    let dispatch = Dispatch {
        router,
        connection: Arc::clone(&connection),
        body_timeout: limits.body_timeout,
    };
    let served = hyper::server::conn::http1::Builder::new().serve_connection(io, dispatch);
    tokio::pin!(served);
    let mut graceful = false;
    loop {
        let (deadline, closing) = match connection.step(&limits) {
            Step::Close => return,
            Step::Wait { deadline, closing } => (deadline, closing),
        };
        if closing && !graceful {
            served.as_mut().graceful_shutdown();
            graceful = true;
        }
        let far = Instant::now() + Duration::from_secs(86_400);
        tokio::select! {
            _ = served.as_mut() => return,
            () = connection.wake.notified() => {}
            () = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {}
        }
    }
}

/// The socket, telling its connection when the bytes of a request's head start to arrive.
struct Watched {
    stream: TcpStream,
    connection: Arc<Connection>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.connection.bytes_arrived();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Hands each request to the router, marking the connection busy until its answer's body is
/// handed over, with a body that fails when it stalls.
#[derive(Clone)]
struct Dispatch {
    router: TowerToHyperService<Router>,
    connection: Arc<Connection>,
    body_timeout: Duration,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Answering>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Dispatch {
    type Response = Response<Answering>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Answer {
        let busy = Busy::new(Arc::clone(&self.connection));
        let timeout = self.body_timeout;
        let request = request.map(|body| Body::new(Stalling::new(body, timeout)));
        let answer = hyper::service::Service::call(&self.router, request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| Answering { body, _busy: busy }))
        })
    }
}

/// Marks its connection busy while it lives.
struct Busy(Arc<Connection>);

impl Busy {
    fn new(connection: Arc<Connection>) -> Busy {
        connection.begin();
        Busy(connection)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// An answer's body; the connection stays busy until it is dropped (written or abandoned).
struct Answering {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Answering {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that fails with [`BodyStalled`] when no frame arrives for its timeout.
struct Stalling {
    body: Incoming,
    timeout: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Stalling {
    fn new(body: Incoming, timeout: Duration) -> Stalling {
        Stalling {
            body,
            timeout,
            sleep: None,
        }
    }
}

impl hyper::body::Body for Stalling {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            if let Some(sleep) = this.sleep.as_mut() {
                sleep.as_mut().reset(Instant::now() + this.timeout);
            }
            return Poll::Ready(frame.map(|result| result.map_err(Into::into)));
        }
        let timeout = this.timeout;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyStalled(timeout))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
