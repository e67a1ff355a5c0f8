import HeraldPush
import HeraldWire
import Testing

@Suite("Push router")
struct PushRouterTests {
    @Test("a platform without a provider is refused at validation and dead-lettered at send")
    func unconfiguredPlatform() async throws {
        let recorded = Recorded()
        let router = PushRouter(ios: LocalDevelopmentProvider { await recorded.add($0) }, android: nil)
        let android = PushTarget(platform: .android, token: "pixel")

        let error = #expect(throws: PushValidationError.self) { try router.validate(.wake(swapUpdateData), for: android) }
        #expect(error?.code.rawValue == "platform_not_configured")
        let outcome = await router.send(.wake(swapUpdateData), to: android, logger: testLogger)
        #expect(outcome.kind == .permanent)
        #expect(outcome.reason == "platform_not_configured")

        let ios = PushTarget(platform: .ios, token: "6970686f6e65")
        #expect(await router.send(.wake(swapUpdateData), to: ios, logger: testLogger).kind == .delivered)
        #expect(await recorded.pushes.map(\.target) == [ios])
    }
}
