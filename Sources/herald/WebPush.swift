import ArgumentParser
import Foundation
import HeraldPush
import HeraldWire

/// `herald webpush`: the VAPID key Web Push messages are signed with.
struct WebPush: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push (UnifiedPush, browsers): make the VAPID key.",
        subcommands: [Keygen.self]
    )

    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new P-256 VAPID key (PEM, owner-only) and print its public key.",
            discussion: """
                Point webpush.vapid_key_file (HERALD_WEBPUSH_VAPID_KEY_FILE) at the file and set
                webpush.contact. The public key printed is the applicationServerKey apps subscribe
                with; GET /api/v1/webpush/vapid-public-key serves it too. Keep the key: a new one
                invalidates every subscription made with the old.
                """
        )

        @OptionGroup var file: KeyFileOptions

        func run() throws {
            let pem = VAPIDSigner.makeKeyPEM()
            let signer = try VAPIDSigner(privateKeyPEM: pem, contact: "mailto:keygen@localhost")
            try file.write(
                pem, publicKey: signer.publicKey, named: "applicationServerKey",
                replacing: "subscriptions made with its key stop working")
        }
    }
}
