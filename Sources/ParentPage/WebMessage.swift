/// One HTTP request as the parent's page sees it: what libmicrohttpd parsed (the page never
/// parses HTTP itself), bounded before it gets here (sizes, counts: `HTTPServer.Limits`).
public struct WebRequest: Sendable, Equatable {
    public var method: String
    /// The path without the query (`/trail`).
    public var path: String
    /// The query's arguments (`?a=b`), and a POST's form fields (urlencoded), each name once
    /// (the last wins).
    public var query: [String: String]
    public var form: [String: String]
    /// Headers the gate reads; nil when absent.
    public var host: String?
    public var origin: String?
    public var referer: String?
    public var secFetchSite: String?
    /// The `ph_session` cookie.
    public var sessionCookie: String?
    /// The client's address (rate limits).
    public var client: String

    public init(
        method: String, path: String, query: [String: String] = [:], form: [String: String] = [:], host: String? = nil,
        origin: String? = nil, referer: String? = nil, secFetchSite: String? = nil, sessionCookie: String? = nil, client: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.form = form
        self.host = host
        self.origin = origin
        self.referer = referer
        self.secFetchSite = secFetchSite
        self.sessionCookie = sessionCookie
        self.client = client
    }

    /// A field of the form, else of the query.
    public subscript(_ name: String) -> String? { form[name] ?? query[name] }

    public var isChange: Bool { method != "GET" && method != "HEAD" }
}

/// What the page answers: a whole body, or an event stream (Server-Sent Events) that the
/// server keeps open and writes as the stream is given text.
public struct WebResponse {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]
    public var stream: EventStream?
    /// A file sent by the kernel from its descriptor (`size` bytes from the start), never read
    /// into memory on the loop: the server owns `fd` from here and closes it.
    public var file: (fd: Int32, size: Int)?

    public init(status: Int = 200, contentType: String = "text/html; charset=utf-8", body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
        stream = nil
    }

    /// The open regular file `fd` of `size` bytes as the body (the server closes `fd`).
    public static func file(fd: Int32, size: Int, contentType: String, headers: [(String, String)] = []) -> WebResponse {
        var response = WebResponse(contentType: contentType, body: [], headers: headers)
        response.file = (fd, size)
        return response
    }

    public init(status: Int = 200, contentType: String = "text/html; charset=utf-8", text: String, headers: [(String, String)] = []) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8), headers: headers)
    }

    public static func stream(_ stream: EventStream) -> WebResponse {
        var response = WebResponse(contentType: "text/event-stream; charset=utf-8", body: [], headers: [("Cache-Control", "no-store")])
        response.stream = stream
        return response
    }

    /// 303 See Other: after a form's POST, the page to show (a reload does not post again).
    public static func seeOther(_ location: String, headers: [(String, String)] = []) -> WebResponse {
        WebResponse(status: 303, contentType: "text/plain; charset=utf-8", text: "See \(location)\n", headers: [("Location", location)] + headers)
    }

    public static func plain(_ status: Int, _ text: String) -> WebResponse {
        WebResponse(status: status, contentType: "text/plain; charset=utf-8", text: text + "\n")
    }
}

/// An open Server-Sent Events stream: text queued by the page (on the loop's thread),
/// taken by the server as the socket can take it. At most `limit` bytes wait: a phone that
/// stops reading loses the stream (closed), never the Pi's memory. A live view sends the
/// latest state only when the last has gone out (`hasPending`): a slow phone skips states.
public final class EventStream {
    public static let limit = 256 * 1024
    private var pending: [UInt8] = []
    public private(set) var isClosed = false
    /// Set by the server: wakes a connection waiting for text.
    public var onText: () -> Void = {}
    /// Set by the page: the connection is gone.
    public var onClose: () -> Void = {}

    public init() {}

    /// Queues one event (`event: NAME`, `data: ...` lines, a blank line).
    public func send(event: String, data: String) {
        var text = "event: \(event)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        write(text + "\n")
    }

    /// A comment line: keeps the connection (and proxies) awake, finds a phone that left.
    public func keepAlive() { write(": keep-alive\n\n") }

    private func write(_ text: String) {
        guard !isClosed else { return }
        if pending.count + text.utf8.count > Self.limit {
            // A phone that stopped reading: its backlog goes with it.
            pending = []
            close()
            return
        }
        pending += text.utf8
        onText()
    }

    /// Up to `max` bytes of what waits (removed).
    public func take(_ max: Int) -> [UInt8] {
        let n = min(max, pending.count)
        let bytes = Array(pending.prefix(n))
        pending.removeFirst(n)
        return bytes
    }

    public var hasPending: Bool { !pending.isEmpty }

    /// No more text: what waits is still sent, then the stream ends.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        onText()
        onClose()
    }

    /// The connection is gone (the server's word): nothing more is kept.
    public func connectionGone() {
        onText = {}
        pending = []
        close()
    }
}
