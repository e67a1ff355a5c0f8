import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// `/admin`: the operator's dashboard, server-rendered HTML behind the admin API key.
///
/// Logging in trades the key for a session cookie (HttpOnly, SameSite=Strict, Secure behind
/// an https public URL or when a trusted proxy says the browser came over https); every POST carries the session's CSRF token in a form field, checked
/// against the session, so another site can make the browser send neither.
struct DashboardRoutes: Sendable {
    let store: any HeraldStoreBackend
    let keys: any APIKeyStore
    let metrics: HeraldMetrics
    let providers: PushRouter
    let relay: ReplyRelay
    let settings: ServerSettings
    let sessions = AdminSessions()
    let replayed: @Sendable () -> Void
    let now: @Sendable () -> Date

    static let cookieName = "herald_admin"
    static let formLimit = 4 * 1024

    func register(on router: Router<HeraldRequestContext>) {
        router.get("admin") { request, _ in try await page(request) }
        router.post("admin/login") { request, context in try await login(request, context: context) }
        router.post("admin/logout") { request, context in try await logout(request, context: context) }
        router.post("admin/dead-letters/:id/replay") { request, context in try await replay(request, context: context) }
    }

    // MARK: Pages

    func page(_ request: Request) async throws -> Response {
        guard let session = try await session(request) else {
            return Self.html(DashboardPage.login(error: nil), status: .ok)
        }
        let query = request.uri.queryParameters
        var notice: (text: String, isError: Bool)?
        if let id = query.get("replayed", as: String.self) {
            notice = ("Dead letter \(id) replayed as a new job.", false)
        } else if let id = query.get("refused", as: String.self) {
            notice = ("Dead letter \(id) was not replayed: \(query.get("why", as: String.self) ?? "refused").", true)
        }
        let moment = now()
        let data = DashboardData(
            now: moment,
            activity: metrics.activity.snapshot(),
            outbox: try await store.outboxSummary(now: moment),
            deadLetters: try await store.deadLetters(matching: DeadLetterFilter(), limit: DashboardPage.deadLettersShown, after: nil),
            heldReplies: relay.heldCount,
            wakes: metrics.wakes.snapshot,
            // Every app's providers; the default app's under the bare platform name.
            providers: providers.apps.keys.sorted().flatMap { app in
                Platform.allCases.map { platform in
                    (
                        app == PushTarget.defaultApp ? platform.rawValue : "\(platform.rawValue) · \(app)",
                        providers.provider(for: platform, app: app)?.status
                    )
                }
            },
            csrf: session.csrf,
            notice: notice
        )
        let nonce = Secrets.random(bytes: 16)
        return Self.html(DashboardPage.render(data, nonce: nonce), status: .ok, nonce: nonce)
    }

    // MARK: Log-in

    func login(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let form = try await Self.form(&request)
        let secret = form["key"]?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !secret.isEmpty, let key = try await keys.apiKey(secret: secret), !key.isRevoked else {
            return Self.html(DashboardPage.login(error: "Unknown or revoked API key."), status: .unauthorized)
        }
        guard key.allows(.admin) else {
            return Self.html(DashboardPage.login(error: "The key '\(key.name)' lacks the admin scope."), status: .forbidden)
        }
        let (id, _) = sessions.open(apiKey: secret, now: now())
        var response = Self.redirect("/admin")
        response.headers[.setCookie] = cookie(id, maxAge: Int(AdminSessions.lifetime), scheme: context.forwardedScheme)
        return response
    }

    func logout(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let (id, _) = try await checkedPost(&request)
        sessions.close(id: id)
        var response = Self.redirect("/admin")
        response.headers[.setCookie] = cookie("", maxAge: 0, scheme: context.forwardedScheme)
        return response
    }

    /// `scheme`: the browser's, as a trusted proxy reported it.
    func cookie(_ value: String, maxAge: Int, scheme: String?) -> String {
        let secure = settings.publicURL.hasPrefix("https://") || scheme == "https" ? "; Secure" : ""
        return "\(Self.cookieName)=\(value); Path=/admin; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(secure)"
    }

    // MARK: Actions

    func replay(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        _ = try await checkedPost(&request)
        let id = try context.parameters.require("id")
        let encoded = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        do {
            let view = try await AdminRoutes.replay(id: id, store: store, now: now())
            if view.replayed { replayed() }
            return Self.redirect("/admin?replayed=\(encoded)#dead-letters")
        } catch let error as APIError {
            return Self.redirect("/admin?refused=\(encoded)&why=\(error.code)#dead-letters")
        }
    }

    /// The session of a form POST whose CSRF token matches it, with the form; else the refusal
    /// thrown as a response (401 without a live session, 403 with a missing or wrong token).
    func checkedPost(_ request: inout Request) async throws -> (id: String, form: [String: String]) {
        guard let id = HTML.cookie(Self.cookieName, in: request.headers[.cookie]),
            let session = try await session(id: id)
        else {
            throw RefusedForm(status: .unauthorized, text: "Your session has ended. Log in again.")
        }
        let form = try await Self.form(&request)
        guard let token = form["csrf"], Secrets.constantTimeEqual(Data(token.utf8), Data(session.csrf.utf8)) else {
            throw RefusedForm(
                status: .forbidden, text: "The form was refused (its security token is missing or stale). Reload the dashboard and try again.")
        }
        return (id, form)
    }

    func session(_ request: Request) async throws -> AdminSessions.Session? {
        guard let id = HTML.cookie(Self.cookieName, in: request.headers[.cookie]) else { return nil }
        return try await session(id: id)
    }

    /// The live session, if its API key is still live and admin (a revoked key ends it).
    func session(id: String) async throws -> AdminSessions.Session? {
        guard let session = sessions.session(id: id, now: now()) else { return nil }
        guard let key = try await keys.apiKey(secret: session.apiKey), !key.isRevoked, key.allows(.admin) else {
            sessions.close(id: id)
            return nil
        }
        return session
    }

    // MARK: Helpers

    static func form(_ request: inout Request) async throws -> [String: String] {
        guard let body = try await Edge.readBody(&request, limit: formLimit) else { return [:] }
        return HTML.form(String(buffer: body))
    }

    static func html(_ text: String, status: HTTPResponse.Status, nonce: String? = nil) -> Response {
        let script = nonce.map { "'nonce-\($0)'" } ?? "'none'"
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .cacheControl: "no-store",
                .contentSecurityPolicy:
                    "default-src 'none'; style-src 'unsafe-inline'; script-src \(script); connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}

/// A dashboard form refused: answered as a small HTML page, not the API's JSON.
struct RefusedForm: HTTPResponseError {
    var status: HTTPResponse.Status
    var text: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        DashboardRoutes.html(DashboardPage.refusal(text), status: status)
    }
}
