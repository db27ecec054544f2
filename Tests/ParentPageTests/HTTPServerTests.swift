#if canImport(Glibc)
import Glibc
#endif
import ParentPage
import Testing
import Web

/// libmicrohttpd for real on a loopback port, driven as the appliance's loop drives it: the
/// test's thread polls the server's fd and calls `process()` while a client socket talks.
@Suite(.serialized)
struct HTTPServerTests {
    /// Sends `request` and pumps the server until the client has read everything (the
    /// server closes) or `seconds` pass; the reply's bytes.
    /// A non-blocking client socket connecting to the server on loopback.
    static func client(_ server: HTTPServer) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        return fd
    }

    static func exchange(_ server: HTTPServer, _ request: [UInt8], seconds: Double = 5, until done: (([UInt8]) -> Bool)? = nil) -> [UInt8] {
        let fd = client(server)
        defer { close(fd) }
        var sent = 0
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Self.now() + seconds
        while Self.now() < deadline {
            var fds = [pollfd(fd: server.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, 10)
            server.process()
            if sent < request.count {
                let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { sent += n }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { reply += buffer[0..<n] }
            if n == 0 { break }
            if let done, done(reply) { break }
        }
        return reply
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func answersAFormAndReadsItsFields() throws {
        var seen: WebRequest?
        let server = try HTTPServer(port: 0, loopbackOnly: true) { request in
            seen = request
            return WebResponse(text: "<p>hello \(HTML.escape(request.form["name"] ?? ""))</p>")
        }
        defer { server.stop() }
        #expect(server.port != 0)
        let body = "name=Jack+%26+Jill&csrf=abc"
        let reply = Self.text(Self.exchange(server, Array("POST /trail?x=1 HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\nCookie: ph_session=s1; other=2\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)))
        #expect(reply.hasPrefix("HTTP/1.1 200"))
        #expect(reply.contains("hello Jack &amp; Jill"))
        #expect(reply.contains("Content-Security-Policy: default-src 'self'"))
        #expect(seen?.form == ["name": "Jack & Jill", "csrf": "abc"])
        #expect(seen?.query == ["x": "1"])
        #expect(seen?.sessionCookie == "s1" && seen?.origin == "http://localhost" && seen?.host == "localhost")
        #expect(seen?.client == "127.0.0.1")
    }

    /// Sends `parts` one after another, the server pumped 0.2 s between them (so each reaches
    /// libmicrohttpd as its own piece), then reads the reply.
    static func exchange(_ server: HTTPServer, parts: [[UInt8]]) -> [UInt8] {
        let fd = client(server)
        defer { close(fd) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for part in parts {
            var sent = 0
            while sent < part.count {
                let n = part[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { sent += n } else { server.process() }
            }
            let until = Self.now() + 0.2
            while Self.now() < until {
                var fds = [pollfd(fd: server.fd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, 10)
                server.process()
            }
        }
        let deadline = Self.now() + 5
        while Self.now() < deadline {
            var fds = [pollfd(fd: server.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, 10)
            server.process()
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { reply += buffer[0..<n] }
            if n == 0 { break }
        }
        return reply
    }

    /// A file answered from its descriptor (the rehearsal's WAV): the bytes as they are on
    /// disk, the length said, the descriptor the server's to close.
    @Test func aFileIsSentFromItsDescriptor() throws {
        let path = "/tmp/http-file-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).bin"
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        #expect(out >= 0)
        defer { unlink(path) }
        #expect(bytes.withUnsafeBytes { write(out, $0.baseAddress, $0.count) } == bytes.count)
        close(out)
        let server = try HTTPServer(port: 0, loopbackOnly: true) { _ in
            .file(fd: open(path, O_RDONLY | O_CLOEXEC), size: bytes.count, contentType: "audio/wav")
        }
        defer { server.stop() }
        let reply = Self.exchange(server, Array("GET /rehearsal.wav HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8), seconds: 10)
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, reply.count - 3)).first(where: { Array(reply[$0..<($0 + 4)]) == separator }) else {
            Issue.record("no header end in \(Self.text(Array(reply.prefix(200))))")
            return
        }
        let head = Self.text(Array(reply[..<end]))
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Length: 300000"))
        #expect(head.contains("audio/wav"))
        #expect(Array(reply[(end + 4)...]) == bytes)
    }

    /// A text in Japanese whose upload is split inside a character (the network splits where
    /// it likes, and libmicrohttpd's post processor hands a value longer than its buffer over
    /// in pieces): the value is the text whole, not replacement characters where it was split.
    @Test func aFieldSplitInsideACharacterIsReadWhole() throws {
        var seen: WebRequest?
        let server = try HTTPServer(port: 0, loopbackOnly: true) { request in
            seen = request
            return WebResponse(text: "ok")
        }
        defer { server.stop() }
        // Longer than the post processor's 4096 bytes, which hands the value over in pieces.
        let clue = String(repeating: "たからは いすの したに ある", count: 40)
        let encoded = clue.utf8.map { byte in byte == 0x20 ? "+" : "%" + String(byte, radix: 16, uppercase: true) }.joined()
        let body = "clue=" + encoded + "&csrf=abc"
        let head = "POST /trail HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        // Split after the first byte of the 10th character ("%E3" of its three bytes).
        let bytes = Array(body.utf8)
        let cut = 5 + 9 * 9 + 3
        let reply = Self.text(Self.exchange(server, parts: [Array(head.utf8) + bytes[..<cut], Array(bytes[cut...])]))
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(60))")
        #expect(seen?.form["clue"] == clue)
        #expect(seen?.form["csrf"] == "abc")
    }

    /// The trail's form at its most treasures (5 fields each, 5 more) is taken; 64 fields
    /// refused a trail of 12 with 413, so it could be neither saved nor shortened.
    @Test func theLongestTrailsFormIsTaken() throws {
        var draft = TrailDraft()
        draft.steps = (0..<TrailDraft.maximumSteps).map { TrailDraft.Step(region: "R\($0)", clue: "clue \($0)") }
        let page = Pages.trail(draft, tags: [], result: nil, canSave: true, Pages.Chrome(csrf: "abc"))
        // Every `name="..."` of the page: what a browser posts (a button's only when pressed).
        let marker = Array("name=\"".utf8)
        let bytes = Array(page.utf8)
        var names = Set<String>()
        var i = 0
        while i + marker.count < bytes.count {
            if Array(bytes[i..<(i + marker.count)]) == marker, let end = bytes[(i + marker.count)...].firstIndex(of: UInt8(ascii: "\"")) {
                names.insert(String(decoding: bytes[(i + marker.count)..<end], as: UTF8.self))
                i = end
            }
            i += 1
        }
        #expect(names.count >= 5 * TrailDraft.maximumSteps + 5, "\(names.count)")
        #expect(names.count <= HTTPServer.Limits().fields)
        var fields = 0
        let server = try HTTPServer(port: 0, loopbackOnly: true) { request in
            fields = request.form.count
            return WebResponse(text: "ok")
        }
        defer { server.stop() }
        let body = names.sorted().map { $0 + "=x" }.joined(separator: "&")
        let reply = Self.text(Self.exchange(server, Array("POST /trail HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)))
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(60))")
        #expect(fields == names.count)
    }

    @Test func aBigBodyIsRefusedUnreadAndTheServerGoesOn() throws {
        var calls = 0
        let server = try HTTPServer(port: 0, loopbackOnly: true) { _ in
            calls += 1
            return WebResponse(text: "ok")
        }
        defer { server.stop() }
        let big = Self.text(Self.exchange(server, Array("POST /trail HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10485760\r\n\r\nname=".utf8), seconds: 3))
        #expect(big.hasPrefix("HTTP/1.1 413"))
        // Chunked, no length: counted as it comes.
        let chunk = String(repeating: "a", count: 70_000)
        let chunked = Self.text(Self.exchange(server, Array("POST /trail HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\(String(chunk.utf8.count, radix: 16))\r\nx=\(chunk.dropFirst(2))\r\n0\r\n\r\n".utf8), seconds: 3))
        // Cut off as it comes: answered 413, or closed (libmicrohttpd takes no answer in the
        // middle of an upload), never read to its end nor handed to the page.
        #expect(chunked.isEmpty || chunked.hasPrefix("HTTP/1.1 413"), "\(chunked.prefix(40))")
        #expect(calls == 0)
        let after = Self.text(Self.exchange(server, Array("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)))
        #expect(after.hasPrefix("HTTP/1.1 200") && calls == 1)
    }

    @Test func notAFormAndNotAMethodAreRefused() throws {
        let server = try HTTPServer(port: 0, loopbackOnly: true) { _ in WebResponse(text: "ok") }
        defer { server.stop() }
        let json = Self.text(Self.exchange(server, Array("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".utf8)))
        #expect(json.hasPrefix("HTTP/1.1 415"))
        let put = Self.text(Self.exchange(server, Array("PUT / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)))
        #expect(put.hasPrefix("HTTP/1.1 405"))
        let junk = Self.text(Self.exchange(server, Array("\u{01}\u{02} nonsense\r\n\r\n".utf8), seconds: 2))
        #expect(junk.isEmpty || junk.hasPrefix("HTTP/1.1 400"))
    }

    @Test func anEventStreamSendsWhatIsQueuedAndEndsWhenClosed() throws {
        var stream: EventStream?
        let server = try HTTPServer(port: 0, loopbackOnly: true) { _ in
            let s = EventStream()
            stream = s
            s.send(event: "hello", data: "{}")
            return .stream(s)
        }
        defer { server.stop() }
        var sentLater = false
        let reply = Self.text(Self.exchange(server, Array("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), seconds: 5) { bytes in
            let text = Self.text(bytes)
            if text.contains("event: hello"), !sentLater {
                sentLater = true
                stream?.send(event: "tags", data: "line one\nline two")
                stream?.close()
            }
            return text.hasSuffix("0\r\n\r\n")
        })
        #expect(reply.contains("text/event-stream"))
        #expect(reply.contains("event: hello\ndata: {}\n\n"))
        #expect(reply.contains("event: tags\ndata: line one\ndata: line two\n\n"))
        #expect(server.openStreams == 0)
    }

    @Test func liveViewsAreBounded() throws {
        var limits = HTTPServer.Limits()
        limits.streams = 1
        var made: [EventStream] = []
        let server = try HTTPServer(port: 0, loopbackOnly: true, limits: limits) { _ in
            let stream = EventStream()
            made.append(stream)
            stream.send(event: "hello", data: "{}")
            return .stream(stream)
        }
        defer { server.stop() }
        let request = Array("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        let first = Self.text(Self.exchange(server, request, seconds: 3) { Self.text($0).contains("event: hello") })
        #expect(first.contains("event: hello"))
        let second = Self.text(Self.exchange(server, request, seconds: 3) { Self.text($0).contains("\r\n\r\n") })
        #expect(second.hasPrefix("HTTP/1.1 503"))
        // The refused one is closed, never left waiting for text.
        #expect(made.count == 2 && made[1].isClosed && !made[0].isClosed)
    }

    @Test func aPortInUseIsSaidAsSuch() throws {
        let first = try HTTPServer(port: 0, loopbackOnly: true) { _ in WebResponse(text: "ok") }
        defer { first.stop() }
        #expect(throws: WebServerError.portInUse(first.port)) { try HTTPServer(port: first.port, loopbackOnly: true) { _ in WebResponse(text: "ok") } }
    }
}
