#if canImport(Glibc)
import Glibc
#endif
import CMicroHTTPD
import ParentPage
import POSIX

/// Why the page's server could not start.
public enum WebServerError: Error, Equatable, CustomStringConvertible {
    /// Another program (or another hunter) has the port.
    case portInUse(UInt16)
    /// A port under 1024 without the capability.
    case permission(UInt16)
    case system(SystemError)
    /// libmicrohttpd refused to start on the socket.
    case library

    public var description: String {
        switch self {
        case let .portInUse(port): "port \(port) is in use by another program"
        case let .permission(port): "port \(port) needs privileges this service does not have"
        case let .system(error): "\(error)"
        case .library: "libmicrohttpd could not start"
        }
    }
}

/// The parent's page's HTTP server: libmicrohttpd (Debian's libmicrohttpd, its HTTP parser
/// and connection handling) with no thread of its own. Its one epoll fd is watched by the
/// caller's event loop, which calls `process()` when it is readable and after `timeout`;
/// every handler runs on that loop's thread, so the page reads the hunt's state directly and
/// shares nothing with another thread. Every bound is libmicrohttpd's (connections in all and
/// per address, seconds a request may take, header memory) or checked here before the page
/// sees a request (body bytes, form fields, open event streams).
public final class HTTPServer {
    public struct Limits: Sendable, Equatable {
        /// Connections kept at once; more are closed as soon as they are accepted (the
        /// listening socket stays open to take and refuse them: never a backlog that holds a
        /// phone up). libmicrohttpd's own limit is 4 times this.
        public var connections: UInt32 = 48
        public var connectionsPerClient: UInt32 = 16
        /// An idle or slow connection is dropped after this long.
        public var secondsPerRequest: UInt32 = 10
        /// A connection's memory: request line, headers and the read buffer.
        public var connectionMemory = 16 * 1024
        /// A request's body (a form): more is refused (413) without being read.
        public var bodyBytes = 64 * 1024
        /// Fields of a form or a query; each value at most `fieldBytes`. The trail's form
        /// sends 5 a treasure and 5 more, 105 at its 20 treasures (64 refused a trail of 12
        /// with 413: not saved, nor a treasure removed).
        public var fields = 128
        public var fieldBytes = 8 * 1024
        /// Event streams open at once (each phone's live view is one).
        public var streams = 8

        public init() {}
    }

    public typealias Handler = (WebRequest) -> WebResponse

    public let port: UInt16
    public let limits: Limits
    /// libmicrohttpd's epoll fd: readable when `process()` has work.
    public private(set) var fd: Int32 = -1
    private var daemon: OpaquePointer?
    private let handler: Handler
    private var streamsOpen = 0
    private var suspended: [ObjectIdentifier: StreamContext] = [:]
    private var stopped = false
    private let clock: () -> Double
    /// Every open connection: when its current request began and whether it was answered.
    /// libmicrohttpd's own timeout is for idle connections only: a client sending a byte a
    /// second would hold its slot for ever, so a request not answered within
    /// `secondsPerRequest` has its socket shut down here.
    private var connections: [OpaquePointer: Deadline] = [:]

    fileprivate struct Deadline {
        var fd: Int32
        var since: Double
        var answered = false
        var cut = false
    }

    /// Listens on `port` (0: any free port; `port` then says which) on every address, IPv6
    /// and IPv4, or only on loopback.
    public init(
        port: UInt16, loopbackOnly: Bool = false, limits: Limits = Limits(), clock: @escaping () -> Double = HTTPServer.monotonic,
        handler: @escaping Handler
    ) throws(WebServerError) {
        self.limits = limits
        self.handler = handler
        self.clock = clock
        let listening = try Self.listen(port: port, loopbackOnly: loopbackOnly)
        self.port = listening.port
        let flags = UInt32(MHD_USE_EPOLL.rawValue) | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard
            let started = ph_mhd_start(
                flags, listening.fd, accessHandler, me, completedHandler, me, connectionHandler, me, limits.connections * 4, limits.connectionsPerClient,
                limits.secondsPerRequest, limits.connectionMemory)
        else {
            Glibc.close(listening.fd)
            throw .library
        }
        daemon = started
        let epoll = ph_mhd_epoll_fd(started)
        guard epoll >= 0 else {
            MHD_stop_daemon(started)
            throw .library
        }
        fd = epoll
    }

    deinit { stop() }

    /// Runs what is ready: accepts, reads, calls the page, writes. On the loop's thread only.
    public func process() {
        guard let daemon, !stopped else { return }
        running += 1
        _ = MHD_run(daemon)
        // What a run finished (a connection closed at the limit of all: the listening socket
        // goes back into its epoll set; a stream's next piece) is taken up by the next run,
        // which no fd might wake: run once more.
        _ = MHD_run(daemon)
        running -= 1
        cutOverdue()
        if stopAsked, running == 0 { stop() }
    }

    /// Inside `process()` (a page's handler runs there): libmicrohttpd must not be stopped
    /// from its own callback, so a stop asked then waits until the run is over.
    private var running = 0
    private var stopAsked = false

    public static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Requests not answered in time (a slow sender) lose their connection.
    private func cutOverdue() {
        let now = clock()
        let limit = Double(limits.secondsPerRequest)
        for (connection, deadline) in connections where !deadline.answered && !deadline.cut && now - deadline.since > limit && deadline.fd >= 0 {
            connections[connection]?.cut = true
            Glibc.shutdown(deadline.fd, Int32(SHUT_RDWR))
        }
    }

    /// Open connections (each phone's, and any client's).
    public var openConnections: Int { connections.count }

    /// Seconds until `process()` must run even with no fd readable (a connection's timeout);
    /// nil: only when the fd is.
    public var timeout: Double? {
        guard let daemon, !stopped else { return nil }
        var milliseconds: UInt64 = 0
        // While a connection is open, at least once a second: its request's deadline.
        let sweep: Double? = connections.values.contains { !$0.answered && !$0.cut } ? 1 : nil
        guard MHD_get_timeout(daemon, &milliseconds) == .YES else { return sweep }
        return min(Double(milliseconds) / 1000, sweep ?? .infinity)
    }

    /// Open event streams (phones watching a live view).
    public var openStreams: Int { streamsOpen }

    /// Closes every connection (event streams first: libmicrohttpd must not stop with a
    /// connection suspended) and the socket.
    public func stop() {
        guard !stopped, let daemon else { return }
        guard running == 0 else {
            stopAsked = true
            return
        }
        stopped = true
        for context in suspended.values {
            context.stream.onText = {}
            MHD_resume_connection(context.connection)
        }
        suspended = [:]
        MHD_stop_daemon(daemon)
        self.daemon = nil
    }

    // MARK: - The listening socket

    private static func listen(port: UInt16, loopbackOnly: Bool) throws(WebServerError) -> (fd: Int32, port: UInt16) {
        // Loopback only (tests, benchmarks): 127.0.0.1 (a dual-stack socket on ::1 takes no
        // IPv4). Otherwise every address, IPv6 and IPv4 on one socket.
        var fd = loopbackOnly ? -1 : Glibc.socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var six = fd >= 0
        if !six {
            fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .system(SystemError("socket", errno: errno)) }
        }
        var yes: Int32 = 1
        var no: Int32 = 0
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if six { _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<Int32>.size)) }
        var result: Int32
        if six {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_any
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            if result != 0, errno == EADDRNOTAVAIL {
                // IPv6 switched off in the kernel: IPv4 only.
                Glibc.close(fd)
                six = false
                fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { throw .system(SystemError("socket", errno: errno)) }
                _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            }
        } else {
            result = -1
        }
        if !six {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = (loopbackOnly ? INADDR_LOOPBACK : INADDR_ANY).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case EADDRINUSE: throw .portInUse(port)
            case EACCES, EPERM: throw .permission(port)
            default: throw .system(SystemError("bind port \(port)", errno: code))
            }
        }
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system(SystemError("listen", errno: code))
        }
        var bound = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        // sin_port and sin6_port sit at the same offset.
        return (fd, UInt16(bigEndian: bound.sin6_port))
    }

    // MARK: - Requests

    /// One request while libmicrohttpd reads it: its headers, its form as it arrives.
    fileprivate final class Exchange {
        var request: WebRequest
        var bodyBytes = 0
        var refusal: (Int, String)?
        var postProcessor: OpaquePointer?
        var fieldCount = 0
        /// A response is queued (an early 413): nothing more is answered.
        var answered = false
        let limits: Limits

        init(request: WebRequest, limits: Limits) {
            self.request = request
            self.limits = limits
        }

        deinit {
            if let postProcessor { _ = MHD_destroy_post_processor(postProcessor) }
        }

        /// The bytes of the field being read: libmicrohttpd hands a long value over in pieces
        /// (512 encoded bytes, or where the network split it), and a character split between
        /// two was decoded as replacement characters (a Japanese clue of a hundred characters
        /// saved garbled, and read aloud so). The value is decoded from all its bytes.
        var current: (key: String, bytes: [UInt8])?

        func field(_ key: String, _ bytes: UnsafeBufferPointer<CChar>, continued: Bool) -> Bool {
            var before: [UInt8] = []
            if continued, let old = current, old.key == key {
                guard old.bytes.count + bytes.count <= limits.fieldBytes else {
                    refusal = (413, "a field of the form is too long")
                    return false
                }
                before = old.bytes
            } else {
                fieldCount += 1
                guard fieldCount <= limits.fields, bytes.count <= limits.fieldBytes else {
                    refusal = (413, "the form has too many or too long fields")
                    return false
                }
            }
            let all = before + UnsafeRawBufferPointer(bytes)
            current = (key, all)
            request.form[key] = String(decoding: all, as: UTF8.self)
            return true
        }
    }

    /// An event stream's connection: suspended while nothing waits, woken by its text.
    fileprivate final class StreamContext {
        let stream: EventStream
        let connection: OpaquePointer
        weak var server: HTTPServer?
        var isSuspended = false

        init(stream: EventStream, connection: OpaquePointer, server: HTTPServer) {
            self.stream = stream
            self.connection = connection
            self.server = server
        }
    }

    fileprivate func access(
        _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = state.pointee else {
            // The headers are in: the request is checked before its body is read.
            let exchange = Exchange(request: requestHead(connection, url: url, method: method), limits: limits)
            state.pointee = Unmanaged.passRetained(exchange).toOpaque()
            if method == "POST" {
                if let length = header(connection, "Content-Length").flatMap({ Int($0) }), length > limits.bodyBytes {
                    exchange.answered = true
                    return queue(connection, .plain(413, "the request is too large (at most \(limits.bodyBytes / 1024) KB)"))
                }
                let type = header(connection, "Content-Type") ?? ""
                if type.lowercased().hasPrefix("application/x-www-form-urlencoded") {
                    exchange.postProcessor = MHD_create_post_processor(connection, 4096, postIterator, Unmanaged.passUnretained(exchange).toOpaque())
                }
                if exchange.postProcessor == nil, header(connection, "Content-Length").map({ $0 != "0" }) ?? false {
                    exchange.refusal = (415, "forms only (application/x-www-form-urlencoded)")
                }
            } else if method != "GET" && method != "HEAD" {
                exchange.refusal = (405, "GET or POST only")
            }
            return .YES
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let size = uploadSize.pointee
            uploadSize.pointee = 0
            exchange.bodyBytes += size
            if exchange.bodyBytes > limits.bodyBytes {
                // Refused now, the rest never read: a 413 when libmicrohttpd takes one in the
                // middle of an upload, else (it refuses) the connection is closed.
                guard !exchange.answered else { return .NO }
                exchange.answered = true
                return queue(connection, .plain(413, "the request is too large (at most \(limits.bodyBytes / 1024) KB)"))
            }
            if exchange.refusal == nil, let processor = exchange.postProcessor, let upload {
                if MHD_post_process(processor, upload, size) != .YES, exchange.refusal == nil {
                    exchange.refusal = (400, "the form could not be read")
                }
            }
            return .YES
        }
        guard !exchange.answered else { return .YES }
        exchange.answered = true
        if let (status, text) = exchange.refusal { return queue(connection, .plain(status, text)) }
        var response = handler(exchange.request)
        if let stream = response.stream, streamsOpen >= limits.streams {
            stream.connectionGone()
            response = .plain(503, "too many live views open (at most \(limits.streams)); close one")
        }
        return queue(connection, response)
    }

    private func requestHead(_ connection: OpaquePointer, url: String, method: String) -> WebRequest {
        var address = [CChar](repeating: 0, count: 64)
        ph_mhd_client_address(connection, &address, address.count)
        var request = WebRequest(
            method: method, path: url, host: header(connection, "Host"), origin: header(connection, "Origin"),
            referer: header(connection, "Referer"), secFetchSite: header(connection, "Sec-Fetch-Site"),
            sessionCookie: value(connection, .COOKIE_KIND, "ph_session"), client: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        var query = QueryCollector(limit: limits.fields, fieldBytes: limits.fieldBytes)
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, pointer)
        }
        request.query = query.values
        return request
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        value(connection, .HEADER_KIND, name)
    }

    private func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
    }

    /// Headers every answer carries: nothing framed, sniffed, cached or sent elsewhere.
    static let standardHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]

    private func queue(_ connection: OpaquePointer, _ answer: WebResponse) -> MHD_Result {
        connections[connection]?.answered = true
        let response: OpaquePointer?
        if let stream = answer.stream {
            let context = StreamContext(stream: stream, connection: connection, server: self)
            let retained = Unmanaged.passRetained(context).toOpaque()
            response = MHD_create_response_from_callback(UInt64.max, 4096, streamReader, retained, streamFreed)
            guard response != nil else {
                Unmanaged<StreamContext>.fromOpaque(retained).release()
                return .NO
            }
            streamsOpen += 1
            stream.onText = { [weak self, unowned context] in self?.wake(context) }
        } else if let file = answer.file {
            // Sent by the kernel from the file (sendfile), read neither on the loop nor into
            // memory: a rehearsal's WAV of tens of MB was read and copied on the hunt's loop.
            response = MHD_create_response_from_fd(file.size, file.fd)
            if response == nil { close(file.fd) }
        } else {
            response = answer.body.withUnsafeBufferPointer { body in
                MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        _ = MHD_add_response_header(response, "Content-Type", answer.contentType)
        let names = Set(answer.headers.map { $0.0.lowercased() })
        for (name, value) in Self.standardHeaders where !names.contains(name.lowercased()) {
            _ = MHD_add_response_header(response, name, value)
        }
        for (name, value) in answer.headers { _ = MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }

    fileprivate func connectionStarted(_ connection: OpaquePointer) {
        var deadline = Deadline(fd: ph_mhd_connection_fd(connection), since: clock())
        if connections.count >= Int(limits.connections), deadline.fd >= 0 {
            // Over the limit: refused at once (closed by libmicrohttpd's next run).
            deadline.cut = true
            Glibc.shutdown(deadline.fd, Int32(SHUT_RDWR))
        }
        connections[connection] = deadline
    }

    fileprivate func connectionClosed(_ connection: OpaquePointer) {
        connections[connection] = nil
    }

    /// A request is over: the connection's next one (keep-alive) has its own deadline.
    fileprivate func requestCompleted(_ connection: OpaquePointer) {
        guard connections[connection] != nil else { return }
        connections[connection]?.since = clock()
        connections[connection]?.answered = false
    }

    fileprivate func wake(_ context: StreamContext) {
        guard context.isSuspended, !stopped else { return }
        context.isSuspended = false
        suspended[ObjectIdentifier(context)] = nil
        MHD_resume_connection(context.connection)
    }

    fileprivate func suspend(_ context: StreamContext) {
        context.isSuspended = true
        suspended[ObjectIdentifier(context)] = context
        MHD_suspend_connection(context.connection)
    }

    fileprivate func streamEnded(_ context: StreamContext) {
        streamsOpen -= 1
        suspended[ObjectIdentifier(context)] = nil
        context.stream.connectionGone()
    }
}

/// A query's arguments, bounded.
private struct QueryCollector {
    var values: [String: String] = [:]
    let limit: Int
    let fieldBytes: Int

    init(limit: Int, fieldBytes: Int) {
        self.limit = limit
        self.fieldBytes = fieldBytes
    }
}

private let queryIterator: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collector = cls.assumingMemoryBound(to: QueryCollector.self)
    guard collector.pointee.values.count < collector.pointee.limit else { return .NO }
    let text = value.map { String(cString: $0) } ?? ""
    guard text.utf8.count <= collector.pointee.fieldBytes else { return .YES }
    collector.pointee.values[String(cString: key)] = text
    return .YES
}

private let postIterator: MHD_PostDataIterator = { cls, _, key, _, _, _, data, offset, size in
    guard let cls, let key else { return .NO }
    let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(cls).takeUnretainedValue()
    let bytes = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    return exchange.field(String(cString: key), bytes, continued: offset > 0) ? .YES : .NO
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, state in
    guard let cls, let connection, let uploadSize, let state else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    return server.access(
        connection, url: url.map { String(cString: $0) } ?? "/", method: method.map { String(cString: $0) } ?? "GET", upload: upload,
        uploadSize: uploadSize, state: state)
}

private let completedHandler: MHD_RequestCompletedCallback = { cls, connection, state, _ in
    if let cls, let connection { Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().requestCompleted(connection) }
    guard let state, let raw = state.pointee else { return }
    Unmanaged<HTTPServer.Exchange>.fromOpaque(raw).release()
    state.pointee = nil
}

private let connectionHandler: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED { server.connectionStarted(connection) } else { server.connectionClosed(connection) }
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -1 }
    let context = Unmanaged<HTTPServer.StreamContext>.fromOpaque(cls).takeUnretainedValue()
    if context.stream.hasPending {
        let bytes = context.stream.take(max)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: source.count) }
        }
        return bytes.count
    }
    if context.stream.isClosed { return -1 }
    context.server?.suspend(context)
    return 0
}

private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let context = Unmanaged<HTTPServer.StreamContext>.fromOpaque(cls).takeRetainedValue()
    context.server?.streamEnded(context)
}
