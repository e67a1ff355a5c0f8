/// The wallet for one push: connected on first use, at most once, and disconnected at the end.
actor WalletSession {
    let wallet: any WalletService
    private var state: State = .idle

    private enum State {
        case idle
        case connected
        case failed(any Error)
    }

    init(wallet: any WalletService) { self.wallet = wallet }

    /// The connected wallet; rethrows the connect failure on every later call.
    func connected() async throws -> any WalletService {
        switch state {
        case .connected: return wallet
        case .failed(let error): throw error
        case .idle:
            do {
                try await wallet.connect()
                state = .connected
                return wallet
            } catch {
                state = .failed(error)
                throw error
            }
        }
    }

    var wasConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    func disconnectIfConnected() async {
        guard case .connected = state else { return }
        state = .idle
        await wallet.disconnect()
    }
}
