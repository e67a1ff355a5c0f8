import Foundation
import HeraldWire

/// A wallet backend's event: shows the backend's own text when it sent one, keeps
/// deposits and withdrawals as pending until confirmed, and refreshes the balance on completion.
struct BackendEventTask: Sendable {
    let event: BackendEvent
    let alert: IncomingPush.Alert?

    func run(in context: TaskContext) async -> TaskOutcome {
        let outcome = Self.outcome(for: event, alert: alert, context.catalogue)
        if context.configuration.syncWalletOnBackendEvents, event.action == .depositConfirmed || event.action == .withdrawalProcessed {
            do {
                try await context.wallet().sync()
            } catch {
                context.log(.warning, "balance refresh failed", ["action": event.action.rawValue, "error": "\(error)"])
            }
        }
        return outcome
    }

    /// The actions documented for wallet backends, whose content a sealed push that did not open
    /// can still show.
    static let knownActions: Set<BackendAction> = [.none, .depositReceived, .depositConfirmed, .withdrawalInitiated, .withdrawalProcessed]

    /// The content and record changes, needing no wallet; also the fallback for a backend push.
    static func outcome(for event: BackendEvent, alert: IncomingPush.Alert?, _ catalogue: ContentCatalogue) -> TaskOutcome {
        let key: ContentCatalogue.Key
        var effects: [RecordEffect] = []
        let id = event.transactionID
        switch event.action {
        case .depositReceived:
            key = .depositReceived
            if let id { effects.append(.pending(PendingItem(kind: .deposit, id: id, amount: event.amount, unit: event.asset, createdAt: Date()))) }
        case .depositConfirmed:
            key = .depositConfirmed
            if let id, let amount = event.amount {
                effects.append(.received(Receipt(id: id, amount: amount, unit: event.asset ?? "", at: Date())))
            } else if let id {
                effects.append(.resolved(id: id))
            }
        case .withdrawalInitiated:
            key = .withdrawalInitiated
            if let id { effects.append(.pending(PendingItem(kind: .withdrawal, id: id, amount: event.amount, unit: event.asset, createdAt: Date()))) }
        case .withdrawalProcessed:
            key = .withdrawalProcessed
            if let id { effects.append(.resolved(id: id)) }
        default:
            key = .backendGeneric
        }
        var content = catalogue.content(for: key, values: ["amount": event.amount ?? "", "asset": event.asset ?? ""])
        // The backend wrote its text (`notification`) for this user: show it as sent.
        if let title = alert?.title, !title.isEmpty {
            content.title = title
            content.body = alert?.body ?? ""
        } else if event.amount == nil, key != .backendGeneric {
            content.body = catalogue.content(for: .backendGeneric).body
        }
        return TaskOutcome(content: content, effects: effects)
    }
}
