import ArgumentParser

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: push notifications that wake Lightning and crypto wallets.",
        version: Herald.version,
        subcommands: [Serve.self, Send.self, Keys.self, WebPush.self, Nostr.self, DeadLetters.self, Config.self]
    )

    /// `herald --version`; raised with each release.
    static let version = "0.22.0"
}
