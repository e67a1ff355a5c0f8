import ArgumentParser

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: push notifications that wake Lightning and crypto wallets.",
        subcommands: [Serve.self, Send.self, Keys.self, DeadLetters.self, Config.self]
    )
}
