import Foundation
import Synchronization
import TrendyAPI
import TrendyAuth
import TrendyModels
import TrendySync

/// The use cases of the types, places and account tabs, and what those tabs read.
extension AppRunner {
    func performManage(_ command: AppUI.Command, filter: UUIDv7?) async throws -> Outcome {
        switch command {
        case .jump(let text): return try await jump(text, filter: filter)
        case .createType(let name):
            let (type, created) = try await TypeActions(env: env).add(name: name)
            return created
                ? Outcome(message: "Added the type \(type.name).", wrote: true)
                : Outcome(message: "The type \(type.name) exists already.", failed: true)
        case .renameType(let id, let name, let color, let icon):
            guard let edited = try await TypeActions(env: env).edit(id, name: name, color: color, icon: icon) else {
                return Outcome(message: "That type is gone.", failed: true)
            }
            return Outcome(message: "Changed the type \(edited.name).", wrote: true)
        case .deleteType(let id):
            let name = try await env.store.eventType(id: id)?.value.name ?? ""
            let events = try await TypeActions(env: env).remove(id)
            return Outcome(
                message: "Deleted the type \(name)" + (events > 0 ? " and its \(events) event(s)." : "."), wrote: true)
        case .createPlace(let name, let center, let radius, let typeName):
            let (point, metres, type) = try await placeFields(center, radius, typeName)
            let added = try await PlaceActions(env: env).add(name: name, center: point, radius: metres, logs: type)
            return Outcome(
                message: "Added \(added.place.name)" + (added.monitored ? "; it is watched." : "; not watched yet."),
                wrote: true)
        case .editPlace(let id, let name, let center, let radius, let typeName):
            let (point, metres, type) = try await placeFields(center, radius, typeName)
            let edited = try await PlaceActions(env: env).edit(id) {
                $0.name = name.trimmingWhiteSpace
                $0.center = point
                $0.radius = metres
                $0.entryEventTypeId = type
            }
            return edited == nil
                ? Outcome(message: "That place is gone.", failed: true)
                : Outcome(message: "Changed \(edited?.name ?? "the place").", wrote: true)
        case .deletePlace(let id):
            try await PlaceActions(env: env).remove(id)
            return Outcome(message: "Deleted the place; its visits stay.", wrote: true)
        default: return try await performAccount(command)
        }
    }

    func performAccount(_ command: AppUI.Command) async throws -> Outcome {
        switch command {
        case .restoreConflict(let id):
            _ = try await env.store.restoreConflict(id: id, newId: env.ids.next(), eventType: nil)
            await env.sync.localWriteHappened()
            return Outcome(message: "Restored: the value that lost is current again.", wrote: true)
        case .dismissConflict(let id):
            try await env.store.dismissConflict(id: id)
            return Outcome(message: "Dismissed: nothing was changed.", wrote: true)
        case .retryFailed:
            let n = try await env.store.retryFailed()
            return Outcome(message: "\(n) refused change(s) will be sent again.", wrote: n > 0)
        case .signOut, .switchAccount:
            let unsent = (try? await env.store.outboxCounts().pending) ?? 0
            let serverError = await env.auth.signOut(scope: .local)
            var message = "Signed out."
            if unsent > 0 { message += " \(unsent) change(s) not sent stay here until you sign in again." }
            if let serverError { message += " The server was not told (\(serverError.reason))." }
            return Outcome(message: message)
        case .changePassword(let password):
            do throws(AuthError) {
                try await env.auth.changePassword(to: password, nonce: nil)
            } catch .reauthenticationNeeded {
                return Outcome(
                    message: "The server wants a code it mails you first: run `trendy account password` in a terminal.",
                    failed: true)
            } catch {
                return Outcome(message: "Not changed: \(error.description)", failed: true)
            }
            return Outcome(message: "Password changed. Your other devices are signed out; this one stays signed in.")
        default: return Outcome()
        }
    }

    /// A place's form read: its centre, radius and the type it logs. A refusal is thrown as the
    /// line to show (``perform(_:filter:)`` keeps the form open with it).
    func placeFields(_ center: String, _ radius: String, _ typeName: String) async throws -> (
        Coordinate, Double, UUIDv7
    ) {
        let point = try parseCoordinate([center])
        guard let metres = Double(radius) else {
            throw CLIError(
                code: .invalidLocation, message: "“\(radius)” is not a radius: metres, like 100.", exitCode: .usage)
        }
        guard let type = try await env.store.eventType(named: typeName.trimmingWhiteSpace)?.value else {
            throw CLIError(
                code: .unknownType, message: "No type named “\(typeName)”: add it on the Types tab first.",
                exitCode: .dataError)
        }
        return (point, metres, type.id)
    }

    /// What the types, places and account tabs show.
    func manageData(_ data: inout AppViewData, _ ui: AppUI, sink: AsyncStream<Input>.Continuation?) async throws {
        let store = env.store
        switch ui.tab {
        case .types:
            data.typeCounts = try await countsByType(sink: sink).map { byType in
                Dictionary(uniqueKeysWithValues: byType.map { ($0.key.description, $0.value) })
            }
        case .places:
            data.places = try await store.geofences().sorted {
                $0.value.name.localizedCaseInsensitiveCompare($1.value.name) == .orderedAscending
            }
            data.visits = try await store.eventPage(offset: 0, limit: 5, filter: EventFilter(source: .geofence)).map(
                \.value)
        case .account:
            data.account.email = env.auth.currentSession?.user.email
            data.conflicts = try await store.conflicts(includeClosed: false)
            data.failed = try await store.failedChanges()
            let ids = data.conflicts.map(\.conflict.entityId) + data.failed.map(\.entityId)
            data.words = try await ConflictWords.load(store, ids: ids, typeNames: data.typeNames)
        case .dashboard, .events, .calendar, .analytics: break
        }
        // The banner's own count (the outbox is counted every half second), not another read.
        data.account.unsent = env.sync.status.pendingCount
    }
}
