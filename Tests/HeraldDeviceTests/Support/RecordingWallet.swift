import Foundation
import HeraldDevice

/// A wallet double that records every call and can fail, hang (ignoring cancellation, like a
/// blocking SDK call) or be slow, per call.
actor RecordingWallet: WalletService {
    enum Call: Equatable, Sendable {
        case connect
        case receiveLimits
        case receive(ReceiveRequest)
        case bolt12Invoice(offer: String, invoiceRequest: String)
        case paymentByHash(String)
        case paymentBySwap(String)
        case sync
        case disconnect
    }

    enum Name: Hashable, Sendable { case connect, receiveLimits, receive, bolt12Invoice, paymentByHash, paymentBySwap, sync }

    enum Behaviour: Sendable {
        case fail(WalletError)
        case failOpaque
        /// Never returns and ignores cancellation.
        case hang
        case slow(Duration)
    }

    struct Opaque: Error {}

    private(set) var calls: [Call] = []

    /// The calls once the session has been let go: the plugin hands back its content first and
    /// disconnects after (so a slow wallet cannot delay what the user sees), which a loaded
    /// machine can stretch past `handle`'s return.
    func callsAfterDisconnect(within timeout: Duration = .seconds(5)) async -> [Call] {
        let end = ContinuousClock.now + timeout
        while calls.last != .disconnect, ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return calls
    }
    var behaviours: [Name: Behaviour] = [:]
    var limits = ReceiveLimits(minMsat: 1_000, maxMsat: 4_000_000_000)
    var invoice = ReceivedInvoice(bolt11: "lnbc10u1ptest", paymentHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    var bolt12 = "lni1qqgtest"
    var payments: [String: WalletPayment] = [:]
    /// Per swap-id hash, the answers of successive lookups (the last one repeats).
    var swapAnswers: [String: [WalletPayment?]] = [:]
    private var hung: [UnsafeContinuation<Void, Never>] = []

    init(_ behaviours: [Name: Behaviour] = [:]) { self.behaviours = behaviours }

    func set(_ name: Name, _ behaviour: Behaviour) { behaviours[name] = behaviour }
    func setPayment(_ payment: WalletPayment, hash: String) { payments[hash] = payment }
    func setSwapAnswers(_ answers: [WalletPayment?], idHash: String) { swapAnswers[idHash] = answers }
    func setLimits(_ limits: ReceiveLimits) { self.limits = limits }

    private func behave(_ name: Name) async throws {
        switch behaviours[name] {
        case nil: return
        case .fail(let error): throw error
        case .failOpaque: throw Opaque()
        case .hang: await withUnsafeContinuation { hung.append($0) }
        case .slow(let duration):
            // Slow but honest: sleeps through cancellation too, as a blocking call would.
            let clock = ContinuousClock()
            let end = clock.now + duration
            while clock.now < end { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    func connect() async throws {
        calls.append(.connect)
        try await behave(.connect)
    }

    func receiveLimits() async throws -> ReceiveLimits {
        calls.append(.receiveLimits)
        try await behave(.receiveLimits)
        return limits
    }

    func receive(_ request: ReceiveRequest) async throws -> ReceivedInvoice {
        calls.append(.receive(request))
        try await behave(.receive)
        return invoice
    }

    func bolt12Invoice(offer: String, invoiceRequest: String) async throws -> String {
        calls.append(.bolt12Invoice(offer: offer, invoiceRequest: invoiceRequest))
        try await behave(.bolt12Invoice)
        return bolt12
    }

    func payment(hash: String) async throws -> WalletPayment? {
        calls.append(.paymentByHash(hash))
        try await behave(.paymentByHash)
        return payments[hash]
    }

    func payment(swapIDHash: String) async throws -> WalletPayment? {
        calls.append(.paymentBySwap(swapIDHash))
        try await behave(.paymentBySwap)
        guard var answers = swapAnswers[swapIDHash], !answers.isEmpty else { return nil }
        let answer = answers.removeFirst()
        swapAnswers[swapIDHash] = answers.isEmpty ? [answer] : answers
        return answer
    }

    func sync() async throws {
        calls.append(.sync)
        try await behave(.sync)
    }

    func disconnect() async { calls.append(.disconnect) }
}
