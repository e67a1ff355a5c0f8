import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import NIOCore
import NIOHPACK
import Testing

/// The APNs look-alike holds ActivityKit pushes (`apns-push-type: liveactivity`) to Apple's
/// rules, so a sender that breaks one fails a test instead of a phone silently dropping its push.
/// The requests go straight over HTTP/2, written by hand: a provider would not send them.
@Suite("APNs look-alike, ActivityKit pushes")
struct MockAPNsLiveActivityTests {
    static let bundleID = "com.example.wallet"
    static let topic = LiveActivityPayload.topic(bundleID: bundleID)
    static let badPayload = MockAPNsAnswer(status: 400, reason: "BadPayload")
    static let topicDisallowed = MockAPNsAnswer(status: 400, reason: "TopicDisallowed")

    /// One request as a sender wrote it.
    struct Send: Sendable {
        var name: String
        var topic = MockAPNsLiveActivityTests.topic
        var pushType = "liveactivity"
        var priority: String? = "10"
        var body: Data
    }

    /// Sends each request in turn to a fresh look-alike (one key, `bundleID` its only app) and
    /// returns its answers, the status and `reason` of each.
    func answers(_ sends: [Send]) async throws -> [MockAPNsAnswer] {
        let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))
        let key = TestKeys.apnsP8()
        let certificate = try TestCertificate.make()
        let server = MockAPNsServer(key: key, topic: Self.bundleID, certificate: certificate, now: clock.function)
        let providerToken = try key.providerToken(issuedAt: clock.now)
        return try await server.withRunning { running in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            return try await withPushHTTPClient(trusting: caFile) { client in
                let endpoint = try client.endpoint(running.baseURL)
                var answers: [MockAPNsAnswer] = []
                for send in sends {
                    var headers = HPACKHeaders()
                    headers.add(name: "authorization", value: "bearer \(providerToken)")
                    headers.add(name: "apns-topic", value: send.topic)
                    headers.add(name: "apns-push-type", value: send.pushType)
                    if let priority = send.priority { headers.add(name: "apns-priority", value: priority) }
                    let response = try await endpoint.execute(
                        PushHTTPRequest(path: "/3/device/\(deviceToken(1))", headers: headers, body: ByteBuffer(bytes: send.body)),
                        timeout: .seconds(10))
                    let json = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
                    answers.append(MockAPNsAnswer(status: response.status, reason: json?["reason"] as? String))
                }
                return answers
            }
        }
    }

    /// Sends `sends` and expects each to be answered `expected`, naming the one that is not.
    func expect(_ sends: [Send], answered expected: MockAPNsAnswer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answers = try await answers(sends)
        for (send, answer) in zip(sends, answers) {
            #expect(answer == expected, "\(send.name)", sourceLocation: sourceLocation)
        }
        #expect(answers.count == sends.count, sourceLocation: sourceLocation)
    }

    static let state = SwapActivityContentState(
        status: "transaction.mempool", step: 1, steps: 3, title: "Waiting for confirmation", updatedAt: 1_750_000_000)
    static let start = LiveActivityAPS.start(
        timestamp: 1_750_000_000, attributes: SwapActivityAttributes(swapID: "0a1b2c"), contentState: state,
        alert: LiveActivityAlert(title: "Swap started", body: "Waiting for confirmation"))
    static let update = LiveActivityAPS.update(timestamp: 1_750_000_600, contentState: state, staleDate: 1_750_004_200)
    static let end = LiveActivityAPS.end(timestamp: 1_750_001_200, contentState: state, dismissalDate: 1_750_004_800)

    /// The body HeraldWire writes for `aps`.
    static func body(_ aps: LiveActivityAPS) throws -> Data {
        try WireJSON.encode(LiveActivityPayload(aps: aps))
    }

    /// The body HeraldWire writes for `aps`, with its `aps` object changed by `edit`.
    static func body(_ aps: LiveActivityAPS, editing edit: (inout [String: Any]) -> Void) throws -> Data {
        let json = try #require(try JSONSerialization.jsonObject(with: body(aps)) as? [String: Any])
        var object = try #require(json["aps"] as? [String: Any])
        edit(&object)
        return try JSONSerialization.data(withJSONObject: ["aps": object])
    }

    @Test("a start, an update and an end as HeraldWire writes them are accepted, at priority 10, 5 or none")
    func validPushes() async throws {
        try await expect(
            [
                Send(name: "start", body: Self.body(Self.start)),
                Send(name: "update at 5", priority: "5", body: Self.body(Self.update)),
                Send(
                    name: "update with an alert",
                    body: Self.body(.update(timestamp: 1, contentState: Self.state, alert: .init(title: "t", body: "b")))),
                Send(name: "update without a priority (APNs reads 10)", priority: nil, body: Self.body(Self.update)),
                Send(name: "end with a dismissal date", body: Self.body(Self.end)),
                Send(name: "end without one", priority: "5", body: Self.body(.end(timestamp: 1_750_001_200, contentState: Self.state))),
                Send(name: "end without content-state", body: Self.body(Self.end) { $0["content-state"] = nil }),
                Send(name: "start with a string alert", body: Self.body(Self.start) { $0["alert"] = "Swap started" }),
            ],
            answered: .success)
    }

    @Test("an ActivityKit push to any topic but <bundle id>.push-type.liveactivity, or another push to that topic: TopicDisallowed")
    func topics() async throws {
        let alert = Data(#"{"aps":{"alert":{"body":"b","title":"t"}}}"#.utf8)
        try await expect(
            [
                Send(name: "the bare bundle id", topic: Self.bundleID, body: Self.body(Self.update)),
                Send(name: "another app's", topic: LiveActivityPayload.topic(bundleID: "com.example.other"), body: Self.body(Self.update)),
                Send(name: "the suffix twice", topic: Self.topic + ".push-type.liveactivity", body: Self.body(Self.update)),
                Send(name: "an alert push to it", pushType: "alert", body: alert),
                Send(name: "a background push to it", pushType: "background", priority: "5", body: Data(#"{"aps":{"content-available":1}}"#.utf8)),
            ],
            answered: Self.topicDisallowed)
        // Unchanged: the same alert push to the bundle id.
        try await expect([Send(name: "an alert push to the bundle id", topic: Self.bundleID, pushType: "alert", body: alert)], answered: .success)
    }

    @Test("an aps without timestamp or event, with another event, or with a date that is not whole seconds: BadPayload")
    func timestampAndEvent() async throws {
        try await expect(
            [
                Send(name: "no timestamp", body: Self.body(Self.update) { $0["timestamp"] = nil }),
                Send(name: "no event", body: Self.body(Self.update) { $0["event"] = nil }),
                Send(name: "event pause", body: Self.body(Self.update) { $0["event"] = "pause" }),
                Send(name: "event Update", body: Self.body(Self.update) { $0["event"] = "Update" }),
                Send(name: "timestamp as text", body: Self.body(Self.update) { $0["timestamp"] = "1750000600" }),
                Send(name: "timestamp with a fraction", body: Self.body(Self.update) { $0["timestamp"] = 1_750_000_600.5 }),
                Send(name: "stale-date as text", body: Self.body(Self.update) { $0["stale-date"] = "soon" }),
                Send(name: "dismissal-date with a fraction", body: Self.body(Self.end) { $0["dismissal-date"] = 1_750_004_800.5 }),
                Send(name: "no aps at all", body: Data(#"{"timestamp":1,"event":"update"}"#.utf8)),
            ],
            answered: Self.badPayload)
    }

    @Test("a start without attributes-type, attributes or alert: BadPayload")
    func startNeedsAll() async throws {
        try await expect(
            [
                Send(name: "no attributes-type", body: Self.body(Self.start) { $0["attributes-type"] = nil }),
                Send(name: "no attributes", body: Self.body(Self.start) { $0["attributes"] = nil }),
                Send(name: "attributes not an object", body: Self.body(Self.start) { $0["attributes"] = "0a1b2c" }),
                Send(name: "no alert", body: Self.body(Self.start) { $0["alert"] = nil }),
            ],
            answered: Self.badPayload)
    }

    @Test("a start or an update without content-state, or any event with one that is not an object: BadPayload")
    func contentState() async throws {
        try await expect(
            [
                Send(name: "start", body: Self.body(Self.start) { $0["content-state"] = nil }),
                Send(name: "update", body: Self.body(Self.update) { $0["content-state"] = nil }),
                Send(name: "update, state as text", body: Self.body(Self.update) { $0["content-state"] = "mempool" }),
                Send(name: "end, state as a list", body: Self.body(Self.end) { $0["content-state"] = [1, 2] }),
            ],
            answered: Self.badPayload)
    }

    @Test("a dismissal-date on a start or an update: BadPayload")
    func dismissalOnlyOnEnd() async throws {
        try await expect(
            [
                Send(name: "start", body: Self.body(Self.start) { $0["dismissal-date"] = 1_750_004_800 }),
                Send(name: "update", body: Self.body(Self.update) { $0["dismissal-date"] = 1_750_004_800 }),
            ],
            answered: Self.badPayload)
    }

    @Test("an ActivityKit payload of 4097 bytes is PayloadTooLarge (413); 4096 bytes is accepted")
    func payloadLimit() async throws {
        func start(bytes: Int) throws -> Data {
            var state = Self.state
            state.title = ""
            let bare = try Self.body(
                .start(timestamp: 1, attributes: .init(swapID: "0a1b2c"), contentState: state, alert: .init(title: "t", body: "b")))
            state.title = String(repeating: "x", count: bytes - bare.count)
            let body = try Self.body(
                .start(timestamp: 1, attributes: .init(swapID: "0a1b2c"), contentState: state, alert: .init(title: "t", body: "b")))
            try #require(body.count == bytes)
            return body
        }
        let answers = try await answers([
            Send(name: "4097", body: try start(bytes: 4097)), Send(name: "4096", body: try start(bytes: 4096)),
        ])
        #expect(answers == [.payloadTooLarge, .success])
    }

    @Test("an ActivityKit push at a priority other than 5 or 10: BadPriority")
    func priority() async throws {
        try await expect(
            [
                Send(name: "priority 1", priority: "1", body: Self.body(Self.update)),
                Send(name: "priority 7", priority: "7", body: Self.body(Self.update)),
            ],
            answered: MockAPNsAnswer(status: 400, reason: "BadPriority"))
    }
}
