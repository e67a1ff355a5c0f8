import Foundation
import HTTPTypes
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// `/admin`: log-in, the session cookie, CSRF-checked forms, and what the page shows.
@Suite("Dashboard")
struct DashboardTests {
    /// Logs in with `key`; returns the cookie's `name=value` and the whole Set-Cookie line.
    static func login(_ client: some TestClientProtocol, key: String) async throws -> (cookie: String, setCookie: String)? {
        let response = try await client.form("/admin/login", ["key": key])
        guard response.status == .seeOther, let line = response.headers[.setCookie] else { return nil }
        return (String(line.prefix { $0 != ";" }), line)
    }

    /// The CSRF token of the page's forms.
    static func csrf(in page: String) -> String? {
        guard let range = page.range(of: #"name="csrf" value=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test("the page asks for a key; a wrong key is 401, a key without admin 403, an admin key a strict, HttpOnly session cookie")
    func login() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        let backend = try await nds.apiKey([.sessions, .events])
        try await nds.app().test(.router) { client in
            let anonymous = try await client.execute(uri: "/admin", method: .get)
            #expect(anonymous.status == .ok)
            #expect(anonymous.text.contains(#"action="/admin/login""#))
            #expect(!anonymous.text.contains("Dead letters"))

            let wrong = try await client.form("/admin/login", ["key": "hk_" + String(repeating: "A", count: 43)])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.headers[.setCookie] == nil)
            let scoped = try await client.form("/admin/login", ["key": backend])
            #expect(scoped.status == .forbidden)
            #expect(scoped.headers[.setCookie] == nil)

            let session = try #require(try await Self.login(client, key: admin))
            #expect(session.setCookie.contains("HttpOnly"))
            #expect(session.setCookie.contains("SameSite=Strict"))
            #expect(session.setCookie.contains("Path=/admin"))
            #expect(!session.setCookie.contains(admin))  // the key never goes into the cookie

            let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie])
            #expect(page.status == .ok)
            #expect(page.text.contains("Dead letters"))
            #expect(page.text.contains("webhooks-rate"))
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(csp.contains("script-src 'nonce-"))
            #expect(page.headers[.cacheControl] == "no-store")
        }
    }

    @Test(
        "a replay from the page needs the session and its CSRF token: 401 without a session, 403 with a missing or wrong token, 303 and a new job with both"
    )
    func csrf() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        let id = try await nds.deadLetter(token: "tok-dash-0001", reason: "ttl_expired: 503")
        try await nds.app().test(.router) { client in
            let session = try #require(try await Self.login(client, key: admin))
            let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie])
            #expect(page.text.contains(id))
            #expect(page.text.contains("/admin/dead-letters/\(id)/replay"))
            let token = try #require(Self.csrf(in: page.text))
            #expect(token.count >= 24)

            let path = "/admin/dead-letters/\(id)/replay"
            #expect(try await client.form(path, ["csrf": token]).status == .unauthorized)
            #expect(try await client.form(path, ["csrf": token], cookie: "herald_admin=forged").status == .unauthorized)
            #expect(try await client.form(path, [:], cookie: session.cookie).status == .forbidden)
            #expect(try await client.form(path, ["csrf": "x" + token.dropFirst()], cookie: session.cookie).status == .forbidden)
            #expect(try await nds.store.status(jobID: id)?.state == .dead)
            #expect(try await nds.store.deadLetters(matching: DeadLetterFilter(), limit: 5, after: nil).letters.count == 1)

            let done = try await client.form(path, ["csrf": token], cookie: session.cookie)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location]?.hasPrefix("/admin?replayed=") == true)
            #expect(try await nds.store.deadLetters(matching: DeadLetterFilter(), limit: 5, after: nil).letters.isEmpty)
            let after = try await client.execute(uri: "/admin?replayed=\(id)", method: .get, headers: [.cookie: session.cookie])
            #expect(after.text.contains("replayed as a new job"))
            #expect(after.text.contains("no-dead-letters"))
        }
    }

    @Test("revoking the admin key ends its dashboard sessions; logging out ends one")
    func sessionsEnd() async throws {
        let nds = try TestNDS()
        let created = try await nds.store.createAPIKey(name: "ops", scopes: [.admin], now: Date())
        let other = try await nds.apiKey([.admin])
        try await nds.app().test(.router) { client in
            let revoked = try #require(try await Self.login(client, key: created.secret))
            #expect(try await nds.store.revokeAPIKey(id: created.key.id, now: Date()))
            let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: revoked.cookie])
            #expect(page.text.contains(#"action="/admin/login""#))

            let session = try #require(try await Self.login(client, key: other))
            let dashboard = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie])
            let token = try #require(Self.csrf(in: dashboard.text))
            #expect(try await client.form("/admin/logout", [:], cookie: session.cookie).status == .forbidden)
            let out = try await client.form("/admin/logout", ["csrf": token], cookie: session.cookie)
            #expect(out.status == .seeOther)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let gone = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie])
            #expect(gone.text.contains(#"action="/admin/login""#))
        }
    }

    @Test("the page shows webhooks and sends as they happen, queue and dead-token counts, and escapes what it shows")
    func figures() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        try await nds.store.markDead(platform: .android, token: "gone", reason: "UNREGISTERED", now: Date())
        _ = try await nds.deadLetter(token: "tok-<script>", reason: "permanent: <b>bad</b>")
        try await nds.app().test(.live) { client in
            for index in 0..<5 {
                let token = String(repeating: "a\(index)", count: 16)
                let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: APNsDeliveryTests.swap)
                #expect(response.status == .ok)
            }
            let session = try #require(try await Self.login(client, key: admin))
            #expect(
                try await eventually {
                    let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie]).text
                    return page.contains("5 in 6 min") && page.contains("local</b> <span class=\"muted\">5 sends")
                })
            let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie]).text
            #expect(page.contains(#"id="dead-token-count">1<"#))
            #expect(page.contains(#"id="dead-letter-count">1<"#))
            #expect(page.contains("<polyline class=\"webhooks\""))
            #expect(!page.contains("<b>bad</b>"))
            #expect(page.contains("permanent"))
            #expect(!page.contains("tok-<script>"))
        }
    }
}

extension TestClientProtocol {
    /// A form POST, with the session cookie if given.
    func form(_ uri: String, _ fields: [String: String], cookie: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let cookie { headers[.cookie] = cookie }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        let pairs: [String] = fields.map { name, value -> String in
            let encoded: String = value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
            return name + "=" + encoded
        }
        let body: String = pairs.joined(separator: "&")
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }
}

@Suite("Dashboard activity ring")
struct ActivityRingTests {
    @Test("counts land in 10-second slots, the rate is the last complete slot's, and slots older than six minutes are forgotten")
    func slots() {
        let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_800_000_000))
        let ring = ActivityRing(now: { clock.withLockedValue { $0 } })
        for _ in 0..<30 { ring.webhookReceived() }
        for _ in 0..<20 { ring.pushSent(provider: "apns", outcome: "delivered") }
        ring.pushSent(provider: "apns", outcome: "retry")
        clock.withLockedValue { $0 += 10 }
        ring.webhookReceived()
        var snapshot = ring.snapshot()
        #expect(snapshot.slots.count == ActivityRing.slotCount)
        #expect(snapshot.slots.suffix(2).map(\.webhooks) == [30, 1])
        #expect(snapshot.webhooksPerSecond == 3.0)
        #expect(snapshot.pushesPerSecond == 2.1)
        #expect(snapshot.outcomes == ["apns": ["delivered": 20, "retry": 1]])
        // Six minutes on, the first slot has left the ring; its place is reused from empty.
        clock.withLockedValue { $0 += 350 }
        ring.webhookReceived()
        snapshot = ring.snapshot()
        #expect(snapshot.slots.reduce(0) { $0 + $1.webhooks } == 2)
        #expect(snapshot.slots.last?.webhooks == 1)
    }
}
