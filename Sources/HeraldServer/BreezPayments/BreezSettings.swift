import Foundation

/// Breez's payment webhooks (`breez.*`).
public struct BreezSettings: RoomSettings, Hashable {
    /// The HMAC key of the webhooks (`breez.webhook_secret_file`); nil turns the route off.
    public var webhookSecret: [UInt8]?

    public init(webhookSecret: [UInt8]? = nil) {
        self.webhookSecret = webhookSecret
    }

    static let scope: String? = "breez"

    static var descriptions: [SettingDescription] {
        [
            .init(
                "webhook_secret_file", flag: false, default: "",
                "The webhook secret Breez gave for your domain; turns on `POST /api/v1/breez/payments`")
        ]
    }

    init(reader: SettingsReader) throws {
        guard let file = reader.text("webhook_secret_file") else { return }
        let source = reader.source("webhook_secret_file")
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw HeraldConfiguration.Invalid("\(source): cannot read '\(file)'")
        }
        // The secret as Breez gave it (hex or any other text) is the HMAC key, as their own
        // examples use it; only a final line break, which editors add, is not part of it.
        var secret = Array(contents)
        while let last = secret.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { secret.removeLast() }
        guard !secret.isEmpty else { throw HeraldConfiguration.Invalid("\(source): '\(file)' is empty") }
        webhookSecret = secret
    }
}
