import ArgumentParser
import Foundation
import HeraldPush
import HeraldServer
import HeraldWire
import Logging

/// `herald send`: one push by hand, through the same providers `serve` uses.
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one notification by hand through the configured provider.",
        discussion: """
            Uses the same configuration as serve (--config, HERALD_APNS_* / HERALD_FCM_* / HERALD_WEBPUSH_*, apps). With
            no credentials, the local development provider prints the payload it would send.
            """
    )

    @Option(help: "ios, android or webpush.")
    var platform: String

    @Option(help: "The device's push token; for webpush the subscription JSON ({\"endpoint\": …, \"keys\": {…}}).")
    var token: String

    @Option(help: "notification_type, e.g. swap_updated.")
    var type: String = NotificationType.swapUpdated.rawValue

    @Option(help: "notification_payload as a JSON object.")
    var payload: String = "{}"

    @Option(help: "app_data to pass along.")
    var appData: String?

    @Option(help: "The app whose credentials send it (see `apps` in the configuration).")
    var app: String = PushTarget.defaultApp

    @OptionGroup var configurationFile: ConfigurationOptions

    func run() async throws {
        guard let platform = Platform(rawValue: platform) else {
            throw ValidationError("--platform must be ios, android or webpush")
        }
        var token = token
        if platform == .webpush {
            guard let subscription = try? WireJSON.decode(WebPushSubscription.self, from: Data(token.utf8)) else {
                throw ValidationError(
                    "--token must be the subscription JSON for webpush: {\"endpoint\": \"https://…\", \"keys\": {\"p256dh\": …, \"auth\": …}}")
            }
            token = subscription.storageToken
        }
        guard (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) is [String: Any] else {
            throw ValidationError("--payload must be a JSON object")
        }
        var logger = Logger(label: "herald")
        logger.logLevel = .info
        let settings = try await configurationFile.load().providers
        let httpClient = try settings.makeHTTPClient(logger: logger)
        let outcome: PushOutcome
        do {
            let router = try settings.makeRouter(
                httpClient: httpClient,
                recordLocal: { push in print(String(decoding: push.payload, as: UTF8.self)) },
                logger: logger
            )
            let message = PushMessage.wake(
                PushData(notificationType: NotificationType(rawValue: type), notificationPayload: payload, appData: appData)
            )
            let target = PushTarget(platform: platform, token: token, app: app)
            do throws(PushValidationError) {
                try router.validate(message, for: target)
            } catch {
                throw ValidationError("\(error.code.rawValue): \(error.message)")
            }
            outcome = await router.send(message, to: target, logger: logger)
        } catch {
            await httpClient.shutdown()
            throw error
        }
        await httpClient.shutdown()
        print("\(outcome)")
        if outcome.kind != .delivered { throw ExitCode(1) }
    }
}
