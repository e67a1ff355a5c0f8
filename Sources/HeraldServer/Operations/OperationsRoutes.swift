import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// `GET /health` and `GET /metrics` (Prometheus text format).
struct OperationsRoutes: Sendable {
    let store: any HeraldStoreBackend
    let providers: PushRouter
    let metrics: HeraldMetrics

    struct Health: Encodable {
        var status: String
        var database: String
        var providers: [String: String]
    }

    func register(on router: Router<HeraldRequestContext>) {
        router.get("health") { _, _ in
            var database = "ok"
            do { try await store.ping() } catch { database = "unavailable" }
            let health = Health(
                status: database == "ok" ? "ok" : "degraded",
                database: database,
                providers: Dictionary(uniqueKeysWithValues: Platform.allCases.map { ($0.rawValue, providers.providerName(for: .device($0))) })
            )
            return try JSONResponse.make(health, status: database == "ok" ? .ok : .serviceUnavailable)
        }
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.render()))
            )
        }
    }
}
