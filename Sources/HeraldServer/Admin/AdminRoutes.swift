import Foundation
import HTTPTypes
import HeraldStore
import Hummingbird

/// `/api/v1/admin/…`: dead letters to inspect, replay and purge, and the outbox's shape, for
/// operators holding an API key with the `admin` scope.
struct AdminRoutes: Sendable {
    let store: any HeraldStoreBackend
    let keys: any APIKeyStore
    /// Tells the dispatcher that replayed jobs wait in the store.
    let replayed: @Sendable () -> Void
    let now: @Sendable () -> Date

    static let pageLimit = 500
    static let bulkReplayLimit = 10_000

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        let admin = router.group("admin").add(middleware: APIKeyAuthenticator(keys: keys, scope: .admin))
        admin.get("dead-letters") { request, _ in try await list(request) }
        admin.post("dead-letters/replay") { request, _ in try await replayMatching(request) }
        admin.post("dead-letters/:id/replay") { _, context in try await replay(context: context) }
        admin.delete("dead-letters") { request, _ in try await purgeMatching(request) }
        admin.delete("dead-letters/:id") { _, context in try await purge(context: context) }
        admin.get("outbox") { _, _ in try JSONResponse.make(OutboxView(try await store.outboxSummary(now: now()))) }
    }

    private static func filter(_ request: Request) throws -> DeadLetterFilter {
        let query = request.uri.queryParameters
        return try DeadLetterReplay.filter(
            reason: query.get("reason", as: String.self), platform: query.get("platform", as: String.self)
        )
    }

    func list(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = try DeadLetterReplay.limit(query.get("limit", as: String.self), fallback: 50, maximum: Self.pageLimit)
        var cursor: DeadLetterCursor?
        if let text = query.get("cursor", as: String.self), !text.isEmpty {
            guard let parsed = DeadLetterCursor(text: text) else {
                throw APIError(.invalidCursor, "cursor must be a next_cursor from an earlier page")
            }
            cursor = parsed
        }
        let page = try await store.deadLetters(matching: try Self.filter(request), limit: limit, after: cursor)
        return try JSONResponse.make(
            DeadLetterListView(deadLetters: page.letters.map(DeadLetterView.init), nextCursor: page.next?.text)
        )
    }

    func replay(context: HeraldRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        let view = try await Self.replay(id: id, store: store, now: now())
        if view.replayed { replayed() }
        return try JSONResponse.make(view, status: view.replayed ? .created : .ok)
    }

    /// Replays one letter (the dashboard's button does too): 201 new, 200 replayed before,
    /// `409 token_dead`, `404 dead_letter_not_found`.
    static func replay(id: String, store: any DeadLetterStore, now: Date) async throws -> ReplayView {
        switch try await store.replayDeadLetter(id: id, plan: DeadLetterReplay.plan(now: now)) {
        case .replayed(let jobID): return ReplayView(id: id, jobID: jobID, replayed: true)
        case .alreadyReplayed(let jobID): return ReplayView(id: id, jobID: jobID, replayed: false)
        case .tokenDead:
            throw APIError(.tokenDead, "the push token of dead letter \(id) is dead: a replay could never be delivered")
        case .notFound:
            throw APIError(.deadLetterNotFound, "no dead letter \(id) (purged, or not a dead letter)")
        }
    }

    func replayMatching(_ request: Request) async throws -> Response {
        let limit = try DeadLetterReplay.limit(
            request.uri.queryParameters.get("limit", as: String.self), fallback: 1_000, maximum: Self.bulkReplayLimit
        )
        let result = try await store.replayDeadLetters(
            matching: try Self.filter(request), limit: limit, plan: DeadLetterReplay.plan(now: now())
        )
        if !result.jobIDs.isEmpty { replayed() }
        return try JSONResponse.make(
            BulkReplayView(replayed: result.jobIDs.count, jobIDs: result.jobIDs, skippedTokenDead: result.skippedTokenDead)
        )
    }

    func purge(context: HeraldRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard try await store.purgeDeadLetter(id: id) else {
            throw APIError(.deadLetterNotFound, "no dead letter \(id)")
        }
        return Response(status: .noContent)
    }

    func purgeMatching(_ request: Request) async throws -> Response {
        let purge = try await store.purgeDeadLetters(matching: try Self.filter(request))
        return try JSONResponse.make(PurgeView(purged: purge.purged, replayed: purge.replayed))
    }
}
