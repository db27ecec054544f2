import ParentPage
import Testing

/// A deterministic "random" source (xorshift64: no draw repeats in a test's lifetime).
final class CountingRandom {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func bytes(_ n: Int) -> [UInt8] {
        (0..<n).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}

struct AccessGateTests {
    let random = CountingRandom()
    func gate() -> AccessGate { AccessGate(names: ["piratepi", "piratepi.local", "localhost"], random: random.bytes) }

    /// `request("/path")` is a GET, `request("POST", "/path")` a POST.
    func request(_ first: String, _ second: String? = nil, host: String? = "piratepi.local:8080", origin: String? = nil, cookie: String? = nil, form: [String: String] = [:], client: String = "192.168.1.20") -> WebRequest {
        let (method, path) = second.map { (first, $0) } ?? ("GET", first)
        return WebRequest(method: method, path: path, form: form, host: host, origin: origin, sessionCookie: cookie, client: client)
    }

    func signIn(_ gate: inout AccessGate, at t: Double = 0) -> AccessGate.Session? {
        if case let .signedIn(session) = gate.logIn(code: gate.code, client: "192.168.1.20", at: t) { return session }
        return nil
    }

    @Test func theCodeIsSixDigitsAndNewOnDemand() {
        var g = gate()
        #expect(g.code.count == 6 && g.code.allSatisfy(\.isNumber))
        let first = g.code
        g.renewCode()
        #expect(g.code.count == 6 && g.code != first)
    }

    @Test func aForeignHostIsRefusedEvenWithASession() {
        var g = gate()
        let session = signIn(&g)
        for host in ["evil.example", "evil.example:8080", "piratepi.evil.example", "1.2.3.4.evil.example", "[zz]", "localhost:99999", "",
                     "piratepi-2.evil.example", "piratepi-2", "piratepi-x.local", "piratepi-1234.local", "other-2.local", "piratepi-.local", "-2.local"] {
            guard case let .answer(response) = g.check(request("/tags", host: host, cookie: session?.id), at: 1) else {
                Issue.record("\(host) passed")
                continue
            }
            #expect(response.status == 421, "\(host)")
        }
        if case .answer = g.check(request("/tags", host: nil, cookie: session?.id), at: 1) {} else { Issue.record("no Host passed") }
    }

    @Test func ownNamesAndAddressLiteralsPass() {
        var g = gate()
        let session = signIn(&g)
        // "piratepi-2.local": avahi's name for this Pi when another has "piratepi".
        for host in ["piratepi", "PiratePi.local:8080", "localhost:8080", "192.168.1.5:8080", "127.0.0.1", "[fe80::1]:8080", "[::1]",
                     "piratepi-2.local:8080", "PiratePi-13.local"] {
            guard case .pass = g.check(request("/tags", host: host, cookie: session?.id), at: 1) else {
                Issue.record("\(host) refused")
                continue
            }
        }
    }

    @Test func withoutASessionPagesGoToTheCodeAndChangesAreRefused() {
        var g = gate()
        guard case let .answer(page) = g.check(request("/trail"), at: 0) else { Issue.record("passed"); return }
        #expect(page.status == 303 && page.headers.contains { $0 == ("Location", "/login") })
        guard case let .answer(change) = g.check(request("POST", "/trail", origin: "http://piratepi.local:8080"), at: 0) else { Issue.record("passed"); return }
        #expect(change.status == 403)
        // A made-up cookie is no session.
        guard case .answer = g.check(request("/trail", cookie: "0123456789abcdef0123456789abcdef"), at: 0) else { Issue.record("passed"); return }
        guard case .pass(nil) = g.check(request("/login"), at: 0) else { Issue.record("login refused"); return }
    }

    @Test func aChangeNeedsItsOwnOriginAndTheSessionsToken() {
        var g = gate()
        guard let session = signIn(&g) else { Issue.record("no session"); return }
        let own = "http://piratepi.local:8080"
        let good = request("POST", "/trail", origin: own, cookie: session.id, form: ["csrf": session.csrf])
        guard case .pass = g.check(good, at: 1) else { Issue.record("refused"); return }
        var cases: [(String, WebRequest)] = []
        cases.append(("cross-origin", request("POST", "/trail", origin: "http://evil.example", cookie: session.id, form: ["csrf": session.csrf])))
        cases.append(("other port", request("POST", "/trail", origin: "http://piratepi.local:9999", cookie: session.id, form: ["csrf": session.csrf])))
        cases.append(("no origin", request("POST", "/trail", cookie: session.id, form: ["csrf": session.csrf])))
        cases.append(("no token", request("POST", "/trail", origin: own, cookie: session.id)))
        cases.append(("wrong token", request("POST", "/trail", origin: own, cookie: session.id, form: ["csrf": String(session.csrf.reversed())])))
        var referred = request("POST", "/trail", cookie: session.id, form: ["csrf": session.csrf])
        referred.referer = "http://evil.example/trail"
        cases.append(("foreign referer", referred))
        var site = good
        site.secFetchSite = "cross-site"
        cases.append(("cross-site fetch", site))
        for (name, r) in cases {
            guard case let .answer(response) = g.check(r, at: 1) else { Issue.record("\(name) passed"); continue }
            #expect(response.status == 403, "\(name)")
        }
        var ownReferer = request("POST", "/trail", cookie: session.id, form: ["csrf": session.csrf])
        ownReferer.referer = own + "/trail"
        guard case .pass = g.check(ownReferer, at: 1) else { Issue.record("own referer refused"); return }
    }

    @Test func wrongCodesWaitLongerEachTimeAndTheRightCodeWaitsToo() {
        var g = gate()
        let wrong = g.code == "000000" ? "111111" : "000000"
        for i in 0..<4 { #expect(g.logIn(code: wrong, client: "10.0.0.9", at: Double(i)) == .wrong(triesLeft: 4 - i)) }
        #expect(g.logIn(code: wrong, client: "10.0.0.9", at: 4) == .wait(60))
        // Locked out: the right code too, from that address.
        #expect(g.logIn(code: g.code, client: "10.0.0.9", at: 10) == .wait(54))
        // Another address is not locked out.
        if case .signedIn = g.logIn(code: g.code, client: "10.0.0.10", at: 10) {} else { Issue.record("other address refused") }
        for i in 0..<5 { _ = g.logIn(code: wrong, client: "10.0.0.9", at: 70 + Double(i)) }
        #expect(g.logIn(code: g.code, client: "10.0.0.9", at: 75) == .wait(119))
    }

    @Test func manyAddressesMeetTheLimitOfAll() {
        var g = gate()
        let wrong = g.code == "000000" ? "111111" : "000000"
        var refused = 0
        for i in 0..<200 {
            if case .wait = g.logIn(code: wrong, client: "10.1.\(i / 250).\(i % 250)", at: Double(i) * 0.1) { refused += 1 }
        }
        // 10 wrong codes a minute from everywhere: 200 guesses in 20 s, 190 refused.
        #expect(refused == 190)
    }

    @Test func sessionsAreBoundedAndEndIdleAndOnANewCode() {
        var g = gate()
        var sessions: [AccessGate.Session] = []
        for i in 0..<10 { if let s = signIn(&g, at: Double(i)) { sessions.append(s) } }
        #expect(g.sessions.count == AccessGate.maximumSessions)
        // The two least recently used went.
        guard case .answer = g.check(request("/ready", cookie: sessions[0].id), at: 11) else { Issue.record("evicted session passed"); return }
        guard case .pass = g.check(request("/ready", cookie: sessions[9].id), at: 11) else { Issue.record("newest refused"); return }
        guard case .answer = g.check(request("/ready", cookie: sessions[9].id), at: 11 + AccessGate.sessionIdle + 1) else { Issue.record("idle passed"); return }
        let a = signIn(&g, at: 100_000)
        let b = signIn(&g, at: 100_001)
        g.renewCode(keeping: b?.id)
        guard case .answer = g.check(request("/ready", cookie: a?.id), at: 100_002) else { Issue.record("old code's session passed"); return }
        guard case .pass = g.check(request("/ready", cookie: b?.id), at: 100_002) else { Issue.record("kept session refused"); return }
    }

    @Test func theCookieIsHttpOnlyAndStrict() {
        var g = gate()
        guard let session = signIn(&g) else { Issue.record("no session"); return }
        let (name, value) = AccessGate.cookie(session)
        #expect(name == "Set-Cookie")
        #expect(value.contains("HttpOnly") && value.contains("SameSite=Strict") && value.hasPrefix("ph_session=\(session.id);"))
        #expect(session.id.count == 32 && session.csrf.count == 32 && session.id != session.csrf)
    }
}
