/// Who may use the parent's page, decided for every request before a page sees it (pure:
/// time and randomness are passed in). Only a parent who heard or read the **setup code**
/// (6 digits, new at each start or on demand) gets in; entering it gives a session cookie
/// (HttpOnly, SameSite=Strict). Every change (a POST) needs the session, the session's CSRF
/// token in the form, and an Origin (or Referer) that is the page itself. Every request's
/// Host must be one of the Pi's own names or an address literal, so that a page elsewhere
/// cannot rebind a name of its own to the Pi (DNS rebinding). Wrong codes are limited per
/// address and in all: a guess a second would take weeks. A parent who typed a wrong code
/// waits at most 15 min; someone on the network who keeps sending wrong codes holds the
/// limit of all addresses for everyone while they do (docs/web.md, known limit).
public struct AccessGate {
    public typealias RandomBytes = (Int) -> [UInt8]

    public struct Session: Sendable, Equatable {
        public var id: String
        public var csrf: String
        public var created: Double
        public var lastUsed: Double
    }

    /// What the gate decided.
    public enum Verdict {
        /// Go on to the page; the session, when there is one.
        case pass(Session?)
        /// Answered here (refused, or a redirect to the code's page).
        case answer(WebResponse)
    }

    public static let cookieName = "ph_session"
    public static let maximumSessions = 8
    public static let sessionIdle = 12 * 3600.0
    /// Wrong codes: this many per address, then a wait that doubles (60 s to 15 min).
    public static let triesPerAddress = 5
    public static let firstWait = 60.0
    public static let longestWait = 900.0
    /// And at most this many wrong codes a minute from everywhere together.
    public static let wrongCodesPerMinute = 10
    public static let trackedAddresses = 64

    /// Paths anyone may load: the code's page and what it is drawn with.
    public static let openPaths: Set<String> = ["/login", "/style.css", "/app.js"]

    /// The names this Pi answers to (its hostname, `hostname.local`, localhost), lowercased.
    public var names: Set<String>
    public private(set) var code: String
    public private(set) var sessions: [Session] = []
    private var random: RandomBytes
    private struct Attempts {
        var wrong = 0
        var lockedUntil = 0.0
        var wait = AccessGate.firstWait
        var lastSeen = 0.0
    }
    private var attempts: [String: Attempts] = [:]
    private var recentWrong: [Double] = []

    public init(names: Set<String>, random: @escaping RandomBytes) {
        self.names = Set(names.map { $0.lowercased() })
        self.random = random
        code = Self.newCode(random)
    }

    /// A new setup code; every session but `keeping` ends (a code read out at a party no
    /// longer opens the page).
    public mutating func renewCode(keeping: String? = nil) {
        code = Self.newCode(random)
        sessions.removeAll { $0.id != keeping }
    }

    /// Six digits, uniform (rejection sampling over 32-bit draws).
    static func newCode(_ random: RandomBytes) -> String {
        let bound: UInt32 = 1_000_000
        let limit = UInt32.max - UInt32.max % bound
        while true {
            let bytes = random(4)
            guard bytes.count == 4 else { continue }
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard value < limit else { continue }
            let digits = String(value % bound)
            return String(repeating: "0", count: 6 - digits.count) + digits
        }
    }

    // MARK: - The checks

    public mutating func check(_ request: WebRequest, at now: Double) -> Verdict {
        guard let host = request.host, hostAllowed(host) else {
            return .answer(.plain(421, "This page answers only to the Pi's own name or address."))
        }
        if request.isChange, !sameOrigin(request, host: host) {
            return .answer(.plain(403, "A change must come from this page itself (cross-site request refused)."))
        }
        expire(at: now)
        let session = request.sessionCookie.flatMap { id in sessions.firstIndex { Self.equal($0.id, id) } }
        if let index = session { sessions[index].lastUsed = now }
        let current = session.map { sessions[$0] }
        if Self.openPaths.contains(request.path) { return .pass(current) }
        guard let current else {
            return .answer(request.isChange ? .plain(403, "Enter the setup code first.") : .seeOther("/login"))
        }
        if request.isChange, !Self.equal(request.form["csrf"] ?? "", current.csrf) {
            return .answer(.plain(403, "This form is out of date: load the page again."))
        }
        return .pass(current)
    }

    /// `host[:port]`: one of the Pi's names, or an IPv4 or bracketed IPv6 literal (a name is
    /// what a rebinding attack controls; an address literal it cannot).
    func hostAllowed(_ host: String) -> Bool {
        let name: Substring
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            let inside = host[host.index(after: host.startIndex)..<end]
            return !inside.isEmpty && inside.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } && Self.portPart(host[host.index(after: end)...])
        }
        if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            guard Self.portPart(host[colon...]) else { return false }
        } else {
            name = host[...]
        }
        let lower = name.lowercased()
        if names.contains(lower) { return true }
        // Avahi's own renaming of the Pi's name when another machine on the network has it
        // (the hunter and the box both "raspberrypi"): "raspberrypi-2.local", what a phone's
        // browser is then offered. Refused with 421, its page could not be reached at all.
        // Still only the Pi's name and .local (a rebinding page cannot make a browser send
        // a .local Host for its own site).
        if lower.hasSuffix(".local"), let dash = lower.lastIndex(of: "-") {
            let digits = lower[lower.index(after: dash)..<lower.index(lower.endIndex, offsetBy: -".local".count)]
            if (1...3).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                names.contains(String(lower[..<dash]) + ".local") {
                return true
            }
        }
        let parts = lower.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in part.count <= 3 && !part.isEmpty && part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }

    private static func portPart(_ text: Substring) -> Bool {
        text.isEmpty || (text.first == ":" && text.count <= 6 && UInt16(text.dropFirst()) != nil)
    }

    /// The Origin is this page (`http://` + the Host it was asked as); without an Origin, the
    /// Referer is a page of it; a browser's Sec-Fetch-Site, when sent, is same-origin.
    func sameOrigin(_ request: WebRequest, host: String) -> Bool {
        if let site = request.secFetchSite, site != "same-origin", site != "none" { return false }
        let own = "http://" + host.lowercased()
        if let origin = request.origin { return origin.lowercased() == own }
        if let referer = request.referer?.lowercased() { return referer == own || referer.hasPrefix(own + "/") }
        return false
    }

    private mutating func expire(at now: Double) {
        sessions.removeAll { now - $0.lastUsed > Self.sessionIdle }
        recentWrong.removeAll { now - $0 > 60 }
    }

    // MARK: - The code

    public enum LoginResult: Equatable {
        case signedIn(Session)
        case wrong(triesLeft: Int)
        /// Too many wrong codes: try again after this many seconds.
        case wait(Double)
    }

    /// The code entered on the code's page, from `client`.
    public mutating func logIn(code entered: String, client: String, at now: Double) -> LoginResult {
        expire(at: now)
        var record = attempts[client] ?? Attempts()
        record.lastSeen = now
        if record.lockedUntil > now { return .wait(record.lockedUntil - now) }
        if recentWrong.count >= Self.wrongCodesPerMinute, let first = recentWrong.first { return .wait(max(1, 60 - (now - first))) }
        let digits = entered.filter { !$0.isWhitespace }
        if Self.equal(digits, code) {
            attempts[client] = nil
            let session = Session(id: Self.hex(random(16)), csrf: Self.hex(random(16)), created: now, lastUsed: now)
            if sessions.count >= Self.maximumSessions, let oldest = sessions.indices.min(by: { sessions[$0].lastUsed < sessions[$1].lastUsed }) {
                sessions.remove(at: oldest)
            }
            sessions.append(session)
            return .signedIn(session)
        }
        recentWrong.append(now)
        record.wrong += 1
        var result = LoginResult.wrong(triesLeft: Self.triesPerAddress - record.wrong)
        if record.wrong >= Self.triesPerAddress {
            record.lockedUntil = now + record.wait
            result = .wait(record.wait)
            record.wait = min(record.wait * 2, Self.longestWait)
            record.wrong = 0
        }
        remember(client, record)
        return result
    }

    /// Bounded: the addresses least recently seen go first (their locks with them: a flood
    /// of addresses still meets the limit of all).
    private mutating func remember(_ client: String, _ record: Attempts) {
        attempts[client] = record
        if attempts.count > Self.trackedAddresses, let stale = attempts.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
            attempts[stale] = nil
        }
    }

    public mutating func logOut(_ id: String) {
        sessions.removeAll { $0.id == id }
    }

    /// The cookie that carries a session (a day at most; the session itself ends idle).
    public static func cookie(_ session: Session) -> (String, String) {
        ("Set-Cookie", "\(cookieName)=\(session.id); HttpOnly; SameSite=Strict; Path=/; Max-Age=86400")
    }

    public static let clearedCookie = ("Set-Cookie", "\(cookieName)=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0")

    // MARK: - Helpers

    /// Compares in time that depends on the lengths only.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
