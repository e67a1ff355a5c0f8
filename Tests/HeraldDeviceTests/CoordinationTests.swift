import Foundation
import Testing

@testable import HeraldDevice

#if canImport(Glibc)
import Glibc
#endif

@Suite("App and extension coordination across two processes", .serialized)
struct CoordinationTests {
    func isYield(_ decision: CoordinationDecision) -> Bool {
        if case .yieldToApp = decision { return true }
        return false
    }

    @Test("the extension yields while the app holds the wallet and answers ping, and proceeds once it is gone")
    func yieldsToRunningApp() async throws {
        let container = try Fixtures.temporaryDirectory()
        let extensionSide = try POSIXAppExtensionCoordinator(container: container)
        #expect(await !extensionSide.appAnswersPing(within: .milliseconds(100)))

        let app = try ChildProcess(arguments: ["app", "--container", container.path])
        let ready = await app.nextLine(within: .seconds(10))
        #expect(ready == "ready \(extensionSide.channelPath)")

        #expect(await extensionSide.appAnswersPing(within: .seconds(1)))
        let decision = await extensionSide.extensionWillHandlePush(pingTimeout: .seconds(1))
        guard case .yieldToApp(let reason) = decision else {
            Issue.record("the extension did not yield")
            return
        }
        #expect(reason == "the app answered ping")

        // The plugin itself yields: no wallet call, the passive handled-by-app content.
        let wallet = RecordingWallet()
        let plugin = Fixtures.plugin(wallet: wallet, coordinator: extensionSide)
        let result = await plugin.handle(json: Fixtures.fcmPush(["type": "incomingHtlc", "payment_hash": "p"]))
        #expect(result.disposition == .yieldedToApp && result.content.interruptionLevel == .passive)
        #expect(await wallet.calls.isEmpty)

        app.stop()
        guard case .proceed(let lease) = await extensionSide.extensionWillHandlePush(pingTimeout: .milliseconds(200)) else {
            Issue.record("the extension still yields after the app exited")
            return
        }
        lease.release()
    }

    @Test("the app stays off the wallet while the extension works")
    func appWaitsForExtension() async throws {
        let container = try Fixtures.temporaryDirectory()
        let extensionSide = try POSIXAppExtensionCoordinator(container: container)
        guard case .proceed(let lease) = await extensionSide.extensionWillHandlePush(pingTimeout: .milliseconds(100)) else {
            Issue.record("no app runs, yet the extension yielded")
            return
        }
        let app = try ChildProcess(arguments: ["app", "--container", container.path])
        #expect(await app.nextLine(within: .seconds(10)) == "waiting")
        #expect(await app.nextLine(within: .milliseconds(300)) == nil)
        #expect(await !extensionSide.appAnswersPing(within: .milliseconds(100)))
        lease.release()
        #expect(await app.nextLine(within: .seconds(5))?.hasPrefix("ready") == true)
        #expect(await extensionSide.appAnswersPing(within: .seconds(1)))
        app.stop()
    }

    @Test("a lock held without ping (an app starting up) also makes the extension yield")
    func lockAloneYields() async throws {
        let container = try Fixtures.temporaryDirectory()
        let coordinator = try POSIXAppExtensionCoordinator(container: container)
        let appLock = try FileLock(path: coordinator.lockPath)
        #expect(try appLock.tryLock())
        let decision = await coordinator.extensionWillHandlePush(pingTimeout: .milliseconds(50))
        guard case .yieldToApp(let reason) = decision else {
            Issue.record("did not yield")
            return
        }
        #expect(reason == "the app holds the wallet lock")
        appLock.unlock()
        #expect(!isYield(await coordinator.extensionWillHandlePush(pingTimeout: .milliseconds(50))))
    }

    @Test("two pushes one process handles at once share the wallet hold; the app gets the wallet once both are done")
    func sharedHold() async throws {
        let container = try Fixtures.temporaryDirectory()
        let coordinator = try POSIXAppExtensionCoordinator(container: container)
        guard case .proceed(let first) = await coordinator.extensionWillHandlePush(pingTimeout: .milliseconds(50)),
            case .proceed(let second) = await coordinator.extensionWillHandlePush(pingTimeout: .milliseconds(50))
        else {
            Issue.record("a push beside another yielded")
            return
        }
        let app = try FileLock(path: coordinator.lockPath)
        first.release()
        #expect(try !app.tryLock())
        second.release()
        #expect(try app.tryLock())
    }

    @Test("a channel name without the secret is refused, and a ping without the secret gets no pong")
    func secretChannel() async throws {
        let container = try Fixtures.temporaryDirectory()
        let coordinator = try POSIXAppExtensionCoordinator(container: container)
        #expect(coordinator.secret.count == 32)
        #expect(coordinator.channelPath.contains(coordinator.secret))
        #expect(throws: CoordinationError.channelWithoutSecret(container.appendingPathComponent("herald.sock").path)) {
            try POSIXAppExtensionCoordinator(container: container, channelPath: container.appendingPathComponent("herald.sock").path)
        }
        var info = stat()
        #expect(stat(container.appendingPathComponent(POSIXAppExtensionCoordinator.secretFileName).path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        // The same container yields the same secret for the app and the extension.
        #expect(try POSIXAppExtensionCoordinator(container: container).secret == coordinator.secret)

        let app = try ChildProcess(arguments: ["app", "--container", container.path])
        #expect(await app.nextLine(within: .seconds(10))?.hasPrefix("ready") == true)
        let clock = DeviceClock.continuous
        for message in ["ping\n", "ping 00000000000000000000000000000000\n", "ping \(coordinator.secret.dropLast())x\n"] {
            let fd = try #require(try UnixSocket.connect(to: coordinator.channelPath))
            UnixSocket.write(message, to: fd)
            #expect(await UnixSocket.readLine(from: fd, within: .milliseconds(400), clock: clock) == nil)
            close(fd)
        }
        // Nothing listens on a name without the secret.
        #expect(try UnixSocket.connect(to: container.appendingPathComponent("herald.sock").path) == nil)
        #expect(await coordinator.appAnswersPing(within: .seconds(1)))
        app.stop()
    }
}
