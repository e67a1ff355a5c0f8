import Foundation
import HeraldWire
import NIOCore
import NIOHTTP1
import NIOSSL

/// What a relay says about itself (NIP-11), as far as Herald uses it: the limits its
/// subscriptions must fit. Served on the relay's own URL to a GET with
/// `Accept: application/nostr+json`; every field is optional, and most relays leave
/// `limitation` out.
public struct RelayInformation: Codable, Sendable, Equatable {
    public var name: String?
    public var software: String?
    public var limitation: Limitation?

    public struct Limitation: Codable, Sendable, Equatable {
        /// Open subscriptions a connection may hold.
        public var maxSubscriptions: Int?
        /// Filters one `REQ` may carry.
        public var maxFilters: Int?
        /// The longest message (a `REQ` included) the relay reads, in bytes.
        public var maxMessageLength: Int?

        public init(maxSubscriptions: Int? = nil, maxFilters: Int? = nil, maxMessageLength: Int? = nil) {
            self.maxSubscriptions = maxSubscriptions
            self.maxFilters = maxFilters
            self.maxMessageLength = maxMessageLength
        }

        enum CodingKeys: String, CodingKey {
            case maxSubscriptions = "max_subscriptions"
            case maxFilters = "max_filters"
            case maxMessageLength = "max_message_length"
        }
    }

    public init(name: String? = nil, software: String? = nil, limitation: Limitation? = nil) {
        self.name = name
        self.software = software
        self.limitation = limitation
    }

    /// A document larger than this is not a relay's information: the answer is dropped.
    static let maxBytes = 64 * 1024
}

extension RelayWebSocket {
    /// GETs the relay's NIP-11 document over the connection a subscription would use (the same
    /// address check, proxy and trust roots), within `timeout` in all: nil when the relay answers
    /// without one; throws when it cannot be asked.
    static func information(
        url: String, address: SocketAddress?, tlsContext: NIOSSLContext, proxy: EgressProxy?, group: any EventLoopGroup,
        timeout: TimeAmount
    ) async throws -> RelayInformation? {
        typealias HTTPChannel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        let connected = try await connect(
            url: url, address: address, tlsContext: tlsContext, proxy: proxy, group: group, connectTimeout: timeout
        ) { channel, origin, path, tls -> EventLoopFuture<(HTTPChannel, String, String)> in
            channel.eventLoop.makeCompletedFuture {
                if let tls {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: origin.serverHostname))
                }
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                // A relay that accepts and then says nothing is closed, as one that never answers;
                // the timer goes with the channel rather than holding it until it fires.
                let stalled = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in stalled.cancel() }
                return (try HTTPChannel(wrappingChannelSynchronously: channel), origin.authority, path)
            }
        }
        let (channel, authority, path) = try await connected.get()
        return try await channel.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: authority)
            headers.add(name: "Accept", value: "application/nostr+json")
            headers.add(name: "Connection", value: "close")
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)))
            try await outbound.write(.end(nil))
            var status: HTTPResponseStatus?
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let head): status = head.status
                case .body(var chunk):
                    guard body.readableBytes + chunk.readableBytes <= RelayInformation.maxBytes else {
                        throw Failure(description: "the relay's information is over \(RelayInformation.maxBytes) bytes")
                    }
                    body.writeBuffer(&chunk)
                case .end:
                    // An answer, but no document: the relay serves none.
                    guard status == .ok else { return nil }
                    return try? WireJSON.decode(RelayInformation.self, from: Data(body.readableBytesView))
                }
            }
            throw Failure(description: "the relay closed before its information ended")
        }
    }
}
