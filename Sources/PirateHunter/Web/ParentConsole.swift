#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import FoundationEssentials
import GameKey
import ParentPage
import POSIX
import Radio
import Ranging
import Web

/// The parent's phone page on an appliance's loop (docs/web.md): libmicrohttpd's epoll fd
/// watched by the loop, every request answered on the loop's thread (the gate first), the
/// live views pushed as Server-Sent Events at most every 100 ms. What the page changes goes
/// through the file and its validator (then a reload, as SIGHUP), never around them.
final class ParentConsole {
    /// What the page asks of the appliance it is in.
    struct Hooks {
        var hunt: () -> HuntView = { HuntView() }
        var checks: () -> [CheckItem] = { [] }
        var say: (String) -> Bool = { _ in false }
        var playRecording: (String) -> String? = { _ in "no speaker" }
        var setVolume: (Double) -> Void = { _ in }
        var control: (String) -> String = { _ in "not available" }
        var box: (() -> BoxView)?
        /// The box page's action ("new-round"): what was done, in words for the log.
        var boxControl: ((String) -> String)?
    }

    let runtime: ApplianceRuntime
    let server: HTTPServer
    private(set) var gate: AccessGate
    var hooks = Hooks()
    private(set) var tags: TagsInView
    private var draft: TrailDraft
    private var trailResult: Pages.TrailResult?
    private var tagMessage: String?
    private var rehearsal = RehearsalState.idle
    private var rehearsalPID: pid_t?
    /// Sign-ins refused for too many wrong codes since the last log line about them, and
    /// when that was: at most a line a minute (a flood of refused sign-ins wrote a warning
    /// each, and journald's rate limit then dropped the hunt's own lines).
    private var refusedSignIns = 0
    private var refusedLoggedAt = -Double.infinity
    private var streams: [EventStream] = []
    /// `pirate-hunter check`'s own lines (run as a child, its audio section left out: the
    /// speaker is this hunter's), at most every 30 s.
    private var checkLines: [CheckItem] = []
    private var checkedAt: Double?
    private var checkPID: pid_t?
    private var pushPending = false
    private var timer: Int?
    /// The configuration file the page saves into (nil: none given, nothing is saved).
    let file: String?
    /// Where the page keeps what it makes: the service's runtime directory, else a private
    /// directory of its own (mkdtemp), removed at the end.
    let directory: String
    private let ownsDirectory: Bool
    let address: String
    private let isBox: Bool

    static let pushInterval = 0.1

    /// Starts the page on `port`; nil (with one warning line) when it cannot: the appliance
    /// goes on without it.
    /// `gate`: the one a page before this one used (the wait for a mended file): its code and
    /// sessions go on.
    static func start(
        port: UInt16, file: String?, runtime: ApplianceRuntime, ranging: RangingConfiguration, tags: [HunterConfiguration.Tag], isBox: Bool = false,
        gate: AccessGate? = nil
    ) -> ParentConsole? {
        guard !runtime.loop.isVirtual else {
            Log.info("parent's page: off on virtual time")
            return nil
        }
        do {
            return try ParentConsole(port: port, file: file, runtime: runtime, ranging: ranging, tags: tags, isBox: isBox, gate: gate)
        } catch let error as WebServerError {
            Log.warning("parent's page: \(error); the \(isBox ? "box" : "hunt") goes on without it (web.port or --web-port picks another, --no-web switches it off)")
            return nil
        } catch {
            Log.warning("parent's page: \(error); the \(isBox ? "box" : "hunt") goes on without it")
            return nil
        }
    }

    private init(
        port: UInt16, file: String?, runtime: ApplianceRuntime, ranging: RangingConfiguration, tags configured: [HunterConfiguration.Tag], isBox: Bool,
        gate carried: AccessGate?
    ) throws {
        self.runtime = runtime
        self.file = file
        self.isBox = isBox
        let host = Self.hostname()
        gate = carried ?? AccessGate(names: [host, host + ".local", "localhost"], random: GameKey.randomBytes)
        var names: [BeaconKey: String] = [:]
        for tag in configured { if let name = tag.name { names[tag.key] = name } }
        tags = TagsInView(ranging: ranging, names: names, calibrations: configured.calibrations)
        draft = TrailDraft()
        if let file, let bytes = try? Self.read(file), let document = try? JSONDocument(parsing: ConfigurationText.withoutByteOrderMark(bytes)) {
            draft = TrailDraft(configuration: document)
        }
        (directory, ownsDirectory) = try Self.stateDirectory()
        var handler: HTTPServer.Handler = { _ in .plain(503, "starting") }
        let server = try HTTPServer(port: port) { request in handler(request) }
        self.server = server
        address = "http://\(host).local:\(server.port)/"
        handler = { [unowned self] request in answer(request) }
        try writeCode()
        runtime.loop.watch(server.fd) { [unowned self] in
            server.process()
            armTimer()
        }
        runtime.onStop { [unowned self] in stop() }
        runtime.loop.repeatEvery(15) { [weak self] _ in
            guard let self else { return false }
            for stream in streams { stream.keepAlive() }
            tags.advance(to: runtime.now)
            return true
        }
        armTimer()
        Log.info("parent's page: \(address) (and http://<this Pi's address>:\(server.port)/); its setup code: `pirate-hunter check` prints it")
    }

    /// libmicrohttpd's own deadlines (a slow connection's timeout) on the loop's timer.
    private func armTimer() {
        if let timer { runtime.loop.cancel(timer) }
        timer = nil
        guard let seconds = server.timeout else { return }
        timer = runtime.loop.schedule(after: max(0.001, min(seconds, 30))) { [weak self] in
            guard let self else { return }
            timer = nil
            server.process()
            armTimer()
        }
    }

    private func stop() {
        for stream in streams { stream.close() }
        streams = []
        server.process()
        server.stop()
        if let pid = rehearsalPID { kill(pid, SIGTERM) }
        // A check still running writes its report here: stopped too, so nothing is left.
        if let pid = checkPID { kill(pid, SIGTERM) }
        let codeFile = directory + "/web-code"
        unlink(codeFile)
        if ownsDirectory {
            for name in ["rehearsal.wav", "rehearsal.json", "rehearsal.log", "check.jsonl"] { unlink(directory + "/" + name) }
            rmdir(directory)
        }
    }

    // MARK: - What the appliance tells the page

    func sighting(_ sighting: BeaconSighting) {
        if tags.heard(sighting) { schedulePush() }
    }

    func huntChanged() { schedulePush() }

    private func schedulePush() {
        guard !streams.isEmpty, !pushPending else { return }
        pushPending = true
        runtime.loop.schedule(after: Self.pushInterval) { [weak self] in
            guard let self else { return }
            pushPending = false
            push()
        }
    }

    private func push() {
        streams.removeAll { $0.isClosed }
        guard !streams.isEmpty else { return }
        let now = runtime.now
        tags.advance(to: now)
        let list = tags.strongestFirst()
        // Each stream's rows carry its own session's token: rendered per stream below.
        let json = "[" + list.map { $0.json(now: now) }.joined(separator: ",") + "]"
        let hunt = Pages.huntDetails(hooks.hunt())
        var behind = false
        for stream in streams {
            // Still sending the last state: this one is skipped, the next push catches up.
            guard !stream.hasPending else {
                behind = true
                continue
            }
            // A stream whose session ended (signed out, a new code, idle) is closed: the
            // live view is the session's, not the connection's.
            guard let (sessionID, csrf) = streamTokens[ObjectIdentifier(stream)], gate.sessions.contains(where: { $0.id == sessionID }) else {
                stream.close()
                continue
            }
            let rows = Pages.tagRows(list, now: now, Pages.Chrome(csrf: csrf))
            stream.send(event: "tags", data: "{\"tags\":\(json),\"now\":\(HTML.number(now, decimals: 3)),\"rows\":\(HTML.jsonString(rows))}")
            stream.send(event: "hunt", data: "{\"html\":\(HTML.jsonString(hunt))}")
        }
        server.process()
        if behind { schedulePush() }
    }

    /// Each live view's session and its CSRF token (its rows' forms carry the token).
    private var streamTokens: [ObjectIdentifier: (String, String)] = [:]

    // MARK: - Requests

    private func answer(_ original: WebRequest) -> WebResponse {
        let now = runtime.now
        // HEAD is answered as GET (libmicrohttpd sends no body).
        var request = original
        if request.method == "HEAD" {
            guard request.path != "/events" else { return .plain(405, "a live view is a GET") }
            request.method = "GET"
        }
        switch gate.check(request, at: now) {
        case let .answer(response): return response
        case let .pass(session): return route(request, session: session, now: now)
        }
    }

    private func route(_ request: WebRequest, session: AccessGate.Session?, now: Double) -> WebResponse {
        switch (request.method, request.path) {
        case ("GET", "/style.css"): return WebResponse(contentType: "text/css; charset=utf-8", text: Assets.css, headers: [("Cache-Control", "max-age=3600")])
        case ("GET", "/app.js"): return WebResponse(contentType: "text/javascript; charset=utf-8", text: Assets.js, headers: [("Cache-Control", "max-age=3600")])
        case ("GET", "/login"):
            if session != nil { return .seeOther(isBox ? "/box" : "/ready") }
            return WebResponse(text: Pages.login(problem: nil, isBox: isBox))
        case ("POST", "/login"): return logIn(request, now: now)
        default: break
        }
        guard let session else { return .seeOther("/login") }
        let chrome = Pages.Chrome(csrf: session.csrf, isBox: isBox)
        switch (request.method, request.path) {
        case ("GET", "/"): return .seeOther(isBox ? "/box" : "/ready")
        case ("GET", "/ready"):
            refreshCheck(now: now)
            var items = hooks.checks()
            if checkPID != nil, checkedAt == nil { items.append(CheckItem(status: .warning, text: "pirate-hunter check is running: this page fills in by itself")) }
            return WebResponse(text: Pages.ready(items + checkLines, address: address, refreshing: checkPID != nil, chrome))
        case ("POST", "/logout"):
            gate.logOut(session.id)
            schedulePush()
            return .seeOther("/login", headers: [AccessGate.clearedCookie])
        case ("POST", "/code"):
            gate.renewCode(keeping: session.id)
            schedulePush()
            do { try writeCode() } catch { Log.warning("parent's page: the new setup code: \(error)") }
            Log.info("parent's page: a new setup code (the others are signed out); `pirate-hunter check` prints it")
            return .seeOther("/ready")
        case ("GET", "/events"):
            let stream = EventStream()
            streams.append(stream)
            streamTokens[ObjectIdentifier(stream)] = (session.id, session.csrf)
            stream.onClose = { [weak self, unowned stream] in self?.streamTokens[ObjectIdentifier(stream)] = nil }
            stream.send(event: "hello", data: "{}")
            schedulePush()
            return .stream(stream)
        default: break
        }
        if isBox {
            if request.method == "GET", request.path == "/box", let box = hooks.box { return WebResponse(text: Pages.box(box(), chrome)) }
            if request.method == "POST", request.path == "/box", let control = hooks.boxControl {
                Log.info("parent's page: \(control(request["action"] ?? ""))")
                return .seeOther("/box")
            }
            return Pages.notFound()
        }
        switch (request.method, request.path) {
        case ("GET", "/tags"):
            let nearest = request.query["nearest"] != nil ? tags.nearest() : nil
            defer { tagMessage = nil }
            return WebResponse(text: Pages.tags(tags.strongestFirst(), nearest: nearest, message: tagMessage, now: now, chrome))
        case ("POST", "/tags/name"): return nameTag(request)
        case ("POST", "/tags/calibrate"): return calibrateTag(request)
        case ("GET", "/trail"):
            defer { trailResult = nil }
            return WebResponse(text: Pages.trail(draft, tags: tags.strongestFirst(), result: trailResult, canSave: file != nil, chrome))
        case ("POST", "/trail"): return postTrail(request)
        case ("GET", "/rehearse"): return WebResponse(text: Pages.rehearse(rehearsal, steps: draft.steps.count, now: now, chrome))
        case ("POST", "/rehearse"): return startRehearsal(request, now: now)
        case ("GET", "/rehearsal.wav"): return rehearsalWAV()
        case ("GET", "/hunt"): return WebResponse(text: Pages.hunt(hooks.hunt(), chrome))
        case ("POST", "/hunt"):
            Log.info("parent's page: \(hooks.control(request["action"] ?? ""))")
            return .seeOther("/hunt")
        case ("POST", "/volume"):
            guard let text = request["volume_db"], let volume = Double(text), (-40...12).contains(volume) else {
                return .plain(400, "volume_db: a number of dB, -40 to 12")
            }
            hooks.setVolume(volume)
            _ = hooks.say("Ahoy! This be how loud I am.")
            // Kept for the next start too: the file's audio.volume_db (a reload applies it).
            if file != nil {
                let problems = save { document in
                    var audio = document["audio"] ?? .object([])
                    audio.set("volume_db", .number(volume.rounded()))
                    document.set("audio", audio)
                }
                for problem in problems { Log.warning("parent's page: the volume is not saved: \(problem)") }
            }
            return .seeOther("/hunt")
        default: return Pages.notFound()
        }
    }

    private func logIn(_ request: WebRequest, now: Double) -> WebResponse {
        switch gate.logIn(code: request.form["code"] ?? "", client: request.client, at: now) {
        case let .signedIn(session):
            Log.info("parent's page: signed in from \(request.client)")
            return .seeOther(isBox ? "/box" : "/ready", headers: [AccessGate.cookie(session)])
        case let .wrong(left):
            return WebResponse(status: 403, text: Pages.login(problem: "That is not the code. \(left) more tr\(left == 1 ? "y" : "ies") before a wait.", isBox: isBox))
        case let .wait(seconds):
            refusedSignIns += 1
            if now - refusedLoggedAt >= 60 {
                let others = refusedSignIns > 1 ? " (\(refusedSignIns) sign-ins refused since the last such line)" : ""
                Log.warning("parent's page: too many wrong setup codes; \(request.client) refused for \(Int(seconds.rounded(.up))) s\(others)")
                refusedSignIns = 0
                refusedLoggedAt = now
            }
            var response = WebResponse(status: 429, text: Pages.login(problem: "Too many wrong codes: wait \(Int(seconds.rounded(.up))) seconds.", isBox: isBox))
            response.headers.append(("Retry-After", String(Int(seconds.rounded(.up)))))
            return response
        }
    }

    // MARK: - Tags

    private func nameTag(_ request: WebRequest) -> WebResponse {
        guard let id = request.form["id"], let tag = tags.tag(id) else { return .plain(400, "no such tag in view") }
        let name = String((request.form["name"] ?? "").trimmingSpaces().prefix(40))
        tagMessage = updateTag(tag.key, id: id) { entry in
            if name.isEmpty { entry.remove("name") } else { entry.set("name", .string(name)) }
        }
        if tagMessage == nil { tags.names[tag.key] = name.isEmpty ? nil : name; tagMessage = "Named \(id) \"\(name)\"." }
        return .seeOther("/tags")
    }

    private func calibrateTag(_ request: WebRequest) -> WebResponse {
        guard let id = request.form["id"], let tag = tags.tag(id) else { return .plain(400, "no such tag in view") }
        guard let power = tags.calibration(id) else {
            tagMessage = "Not enough of \(id) heard yet: hold it 1 m from the Pi for half a minute, then press again."
            return .seeOther("/tags")
        }
        tagMessage = updateTag(tag.key, id: id) { $0.set("power", .number(Double(power))) }
        if tagMessage == nil { tags.calibrations[tag.key] = power; tagMessage = "Calibrated \(id): \(power) dBm at 1 m." }
        return .seeOther("/tags")
    }

    /// Changes the file's `tags` entry of `key` (made when missing); nil when saved.
    private func updateTag(_ key: BeaconKey, id: String, _ change: (inout JSONDocument) -> Void) -> String? {
        save { document in
            var list = document["tags"]?.arrayValue ?? []
            let index = list.firstIndex { entry in
                entry["region"]?.stringValue.flatMap { RangingOutput.region($0) }.map { $0.uuid == key.uuid && $0.major == key.major && $0.minor == key.minor } ?? false
            }
            var entry = index.map { list[$0] } ?? .object([("region", .string(id))])
            change(&entry)
            if let index { list[index] = entry } else { list.append(entry) }
            document.set("tags", .array(list))
        }.first
    }

    // MARK: - The trail

    private func postTrail(_ request: WebRequest) -> WebResponse {
        var next = TrailDraft(form: request.form, keepingFrom: draft)
        let action = request.form["action"] ?? "keep"
        switch action {
        case "add":
            guard next.steps.count < TrailDraft.maximumSteps else { break }
            // The strongest tag in view not on the trail yet.
            let used = Set(next.steps.map(\.region))
            next.steps.append(TrailDraft.Step(region: tags.strongestFirst().first { !used.contains($0.id) }?.id ?? ""))
            trailResult = .note("Treasure \(next.steps.count) added: pick its tag and write its clue.")
        case "save":
            draft = next
            let problems = save { document in document = draft.applied(to: document) }
            trailResult = problems.isEmpty ? .saved("Saved and in use: the hunt starts again with this trail.") : .problems(problems)
            return .seeOther("/trail")
        default:
            if action.hasPrefix("remove-"), let n = Int(action.dropFirst(7)), next.steps.indices.contains(n) {
                next.steps.remove(at: n)
                trailResult = .note("Treasure \(n + 1) removed (not saved yet).")
            } else if action.hasPrefix("say-"), let n = Int(action.dropFirst(4)), next.steps.indices.contains(n) {
                let clue = next.steps[n].clue
                trailResult = .note(clue.isEmpty ? "Treasure \(n + 1) has no clue text to say." : hooks.say(clue) ? "Saying treasure \(n + 1)'s clue on the speaker." : "No speaker or voice to say it.")
            } else {
                trailResult = .note("Kept as a draft (not saved): Rehearse plays it.")
            }
        }
        draft = next
        return .seeOther("/trail")
    }

    /// The file read, changed by `change`, checked as `hunt` and `check` check it, written
    /// whole (or not at all) and reloaded: the problems (empty: saved).
    private func save(_ change: (inout JSONDocument) -> Void) -> [String] {
        guard let file else { return ["no configuration file: the hunter was started without --config"] }
        var document: JSONDocument
        do {
            let bytes = try Self.read(file)
            document = try JSONDocument(parsing: ConfigurationText.withoutByteOrderMark(bytes))
        } catch let error as SystemError where error.errno == ENOENT {
            document = .object([])
        } catch {
            return ["\(file): cannot be read as JSON (\(error)); fix it by hand or with `pirate-hunter check`"]
        }
        change(&document)
        let bytes = Array(document.text.utf8)
        if let problems = Self.problems(bytes, file: file), !problems.isEmpty { return problems }
        do {
            try AtomicFile.replace(bytes, at: file, newFileMode: 0o640)
        } catch {
            return ["\(file): not saved: \(error)"]
        }
        Log.info("parent's page: saved \(file); reloading")
        runtime.onReload()
        return []
    }

    /// What the configuration's validator says of `bytes` (nil: nothing).
    static func problems(_ bytes: [UInt8], file: String) -> [String]? {
        do {
            let configuration = try HunterConfiguration.decode(bytes, file: file)
            let found = ConfigurationValidator.problems(configuration)
            return found.isEmpty ? nil : found.map(\.message)
        } catch {
            return [error.message] + error.further
        }
    }

    // MARK: - Rehearsal

    private func startRehearsal(_ request: WebRequest, now: Double) -> WebResponse {
        if case .running = rehearsal { return .seeOther("/rehearse") }
        guard !draft.steps.isEmpty else {
            rehearsal = .failed("the trail has no treasure yet: make one on the Trail page")
            return .seeOther("/rehearse")
        }
        // The draft inside the file's settings, its recordings' paths made whole.
        var document = JSONDocument.object([])
        if let file, let bytes = try? Self.read(file), let parsed = try? JSONDocument(parsing: ConfigurationText.withoutByteOrderMark(bytes)) {
            document = parsed
        }
        var resolved = draft
        let base = file.map { path in path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) : "." } ?? "."
        for i in resolved.steps.indices {
            if let wav = resolved.steps[i].clueWAV, !wav.hasPrefix("/") { resolved.steps[i].clueWAV = base + "/" + wav }
        }
        document = resolved.applied(to: document)
        document.remove("record")
        let bytes = Array(document.text.utf8)
        let draftFile = directory + "/rehearsal.json"
        if let problems = Self.problems(bytes, file: "the trail"), let first = problems.first {
            rehearsal = .failed(first)
            return .seeOther("/rehearse")
        }
        do {
            try AtomicFile.write(bytes, to: draftFile, mode: 0o600)
        } catch {
            rehearsal = .failed("\(error)")
            return .seeOther("/rehearse")
        }
        let wav = directory + "/rehearsal.wav"
        let toSpeaker = request.form["action"] == "speaker"
        guard let pid = Self.spawn([Self.executable(), "rehearse", "--config", draftFile, "--out", wav], log: directory + "/rehearsal.log") else {
            rehearsal = .failed("could not start the rehearsal")
            return .seeOther("/rehearse")
        }
        rehearsalPID = pid
        rehearsal = .running(started: now)
        Log.info("parent's page: rehearsing \(draft.steps.count) treasure(s) (process \(pid))")
        watchRehearsal(pid, wav: wav, toSpeaker: toSpeaker)
        return .seeOther("/rehearse")
    }

    private func watchRehearsal(_ pid: pid_t, wav: String, toSpeaker: Bool) {
        whenExited(pid) { [weak self] exitCode in
            guard let self else { return }
            rehearsalPID = nil
            guard exitCode == 0 else {
                let log = (try? Self.read(directory + "/rehearsal.log")).map { String(decoding: $0.suffix(400), as: UTF8.self) } ?? ""
                let reason = log.split(separator: "\n").last(where: { $0.contains("pirate-hunter") || $0.contains("error") }).map(String.init)
                    ?? exitCode.map { "exit \($0)" } ?? "killed"
                rehearsal = .failed(reason)
                return
            }
            let seconds = (try? WAVFile.read(path: wav).durationSeconds) ?? 0
            rehearsal = .ready(seconds: seconds)
            if toSpeaker, let problem = hooks.playRecording(wav) { Log.warning("parent's page: the rehearsal on the speaker: \(problem)") }
        }
    }

    /// `done` with the child's exit code (nil: killed by a signal, or not ours) once it has
    /// ended, asked every 0.2 s on the loop (waitpid, WNOHANG: the loop never waits for it).
    private func whenExited(_ pid: pid_t, _ done: @escaping (Int32?) -> Void) {
        runtime.loop.schedule(after: 0.2) { [weak self] in
            guard let self else { return }
            var status: Int32 = 0
            let ended = waitpid(pid, &status, WNOHANG)
            guard ended == pid || ended < 0 else { return whenExited(pid, done) }
            done(ended == pid && status & 0x7F == 0 ? (status >> 8) & 0xFF : nil)
        }
    }

    /// The rehearsal's WAV, sent from its file by the kernel: read and copied on the loop (up
    /// to 64 MB), it held the hunt's ranging and timers up for a second or more.
    private func rehearsalWAV() -> WebResponse {
        guard case .ready = rehearsal, let (fd, size) = try? SafeFile.openRegular(directory + "/rehearsal.wav", limit: 64 << 20, followSymlinks: false) else {
            return .plain(404, "no rehearsal yet: press Rehearse first")
        }
        return .file(fd: fd.rawValue, size: size, contentType: "audio/wav", headers: [("Content-Disposition", "attachment; filename=\"rehearsal.wav\"")])
    }

    // MARK: - check

    private func refreshCheck(now: Double) {
        guard !isBox, checkPID == nil, checkedAt.map({ now - $0 > 30 }) ?? true else { return }
        var arguments = [Self.executable(), "check", "--json", "--silent"]
        if let file { arguments += ["--config", file] }
        let output = directory + "/check.jsonl"
        guard let pid = Self.spawn(arguments, log: output) else { return }
        checkPID = pid
        watchCheck(pid, output: output)
    }

    private func watchCheck(_ pid: pid_t, output: String) {
        whenExited(pid) { [weak self] _ in
            guard let self else { return }
            checkPID = nil
            checkedAt = runtime.now
            checkLines = Self.checkItems((try? Self.read(output)) ?? [])
            unlink(output)
        }
    }

    /// `check --json`'s lines as the page's items (not its audio section, nor its summary).
    static func checkItems(_ bytes: [UInt8]) -> [CheckItem] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let item = try? JSONDocument(parsing: Array(line.utf8)), item["event"]?.stringValue == "check",
                let section = item["section"]?.stringValue, section != "audio", let name = item["name"]?.stringValue,
                let status = item["status"]?.stringValue, status != "skip"
            else { return nil }
            let detail = item["detail"]?.stringValue ?? ""
            return CheckItem(status: status == "ok" ? .ok : status == "warn" ? .warning : .problem, text: "\(section): \(name): \(detail)", fix: item["fix"]?.stringValue)
        }
    }

    // MARK: - Files and processes

    private func writeCode() throws(SystemError) {
        try AtomicFile.write(Array((gate.code + "\n").utf8), to: directory + "/web-code", mode: 0o600)
    }

    /// The runtime directory systemd made for the service (RUNTIME_DIRECTORY), else one of
    /// our own, made new (mkdtemp: never a predictable path in a shared directory).
    static func stateDirectory() throws(SystemError) -> (String, Bool) {
        if let runtime = getenv("RUNTIME_DIRECTORY").map({ String(cString: $0) }), !runtime.isEmpty {
            return (String(runtime.split(separator: ":").first ?? Substring(runtime)), false)
        }
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/pirate-hunter-page.XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw SystemError("mkdtemp \(base)", errno: errno) }
        return (String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), true)
    }

    /// A regular file's bytes, at most `limit` (`SafeFile.read`: never through a symlink,
    /// never waited on). The page runs on the event loop, and a configuration given as a
    /// FIFO (which `ConfigurationFile` reads, with a timeout) has no writer left by now: it is
    /// refused at once (EINVAL), as anything but a regular file.
    static func read(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        do {
            return try SafeFile.read(path, limit: limit, followSymlinks: false)
        } catch where error.errno == EINVAL {
            throw SystemError("open \(path)", errno: EINVAL, explanation: "is not a regular file")
        } catch {
            throw SystemError("read \(path)", errno: error.errno)
        }
    }

    static func executable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "/proc/self/exe" }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `arguments` run as a child, stdin from /dev/null, stdout and stderr to `log` (made new).
    static func spawn(_ arguments: [String], log: String) -> pid_t? {
        unlink(log)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child gets the default signal mask (the loop blocks its signals for signalfd).
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        return result == 0 ? pid : nil
    }

    static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "raspberrypi" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "raspberrypi" : name.lowercased()
    }
}
