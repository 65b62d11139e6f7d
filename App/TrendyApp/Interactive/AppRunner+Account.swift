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
            let fields = try await placeFields(center, radius, typeName)
            guard case .success(let (point, metres, type)) = fields else { return fields.refusal }
            let added = try await PlaceActions(env: env).add(name: name, center: point, radius: metres, logs: type)
            return Outcome(
                message: "Added \(added.place.name)" + (added.monitored ? "; it is watched." : "; not watched yet."),
                wrote: true)
        case .editPlace(let id, let name, let center, let radius, let typeName):
            let fields = try await placeFields(center, radius, typeName)
            guard case .success(let (point, metres, type)) = fields else { return fields.refusal }
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

    /// A place's form read: its centre, radius and the type it logs, or the line that refuses it.
    func placeFields(_ center: String, _ radius: String, _ typeName: String) async throws -> PlaceFields {
        let point: Coordinate
        do { point = try parseCoordinate([center]) } catch {
            return .refused(Outcome(message: error.message, failed: true))
        }
        guard let metres = Double(radius) else {
            return .refused(Outcome(message: "“\(radius)” is not a radius: metres, like 100.", failed: true))
        }
        guard let type = try await env.store.eventType(named: typeName.trimmingWhiteSpace)?.value else {
            return .refused(
                Outcome(message: "No type named “\(typeName)”: add it on the Types tab first.", failed: true))
        }
        return .success((point, metres, type.id))
    }

    /// What the types, places and account tabs show.
    func manageData(_ data: inout AppViewData, _ ui: AppUI) async throws {
        let store = env.store
        switch ui.tab {
        case .types:
            let key = TotalKey(
                filter: nil, mark: try await store.localChangeMark(), synced: env.sync.status.lastSuccessfulSync)
            if let known = typeTotals.withLock({ $0 }), known.key == key {
                data.typeCounts = known.counts
            } else {
                data.typeCounts = Dictionary(
                    try await store.eventCountsByType(from: .distantPast, to: .distantFuture).map {
                        ($0.key.description, $0.value)
                    },
                    uniquingKeysWith: { a, _ in a })
                typeTotals.withLock { [counts = data.typeCounts] in $0 = (key, counts) }
            }
        case .places:
            data.places = try await store.geofences().sorted {
                $0.value.name.localizedCaseInsensitiveCompare($1.value.name) == .orderedAscending
            }
            data.visits = try await store.eventPage(offset: 0, limit: 5, filter: EventFilter(source: .geofence)).map(
                \.value)
        case .account:
            data.account.email = env.auth.currentSession?.user.email
            data.account.deviceId = try await store.deviceId()
            data.conflicts = try await store.conflicts(includeClosed: false)
            data.failed = try await store.failedChanges()
            let ids = data.conflicts.map(\.conflict.entityId) + data.failed.map(\.entityId)
            data.subjects = try await ConflictWords.load(store, ids: ids).subjects
        case .dashboard, .events, .calendar, .analytics: break
        }
        data.account.unsent = try await store.outboxCounts().pending
    }
}

/// A place's form, read: the fields, or why not.
enum PlaceFields {
    case success((Coordinate, Double, UUIDv7))
    case refused(AppCore.Outcome)

    /// The refusal's line (nil outcome for a success, never asked for).
    var refusal: AppCore.Outcome {
        if case .refused(let outcome) = self { return outcome }
        return AppCore.Outcome()
    }
}
