import Foundation
import TrendyAuth
import TrendyModels
import TrendySync

/// The use cases behind the later screens' keys: logging at another time, undo, jumping to a day,
/// types, places, conflicts, refused changes and the account. Each answers the line to show; a
/// refusal is `failed` (its form stays as typed).
extension AppRunner {
    typealias Outcome = AppCore.Outcome

    /// The events use cases with what `u` needs to take each back.
    func performEvent(_ command: AppUI.Command) async throws -> Outcome {
        let actions = EventActions(env: env)
        switch command {
        case .log(let typeId): return try await log(typeId, at: nil, note: nil)
        case .logAt(let typeId, let when, let note, let properties):
            guard let at = time(when) else { return notATime(when) }
            return try await log(typeId, at: at, note: note, properties: properties)
        case .delete(let id):
            let before = try await env.store.event(id: id)?.value
            try await actions.delete(id)
            return Outcome(message: "Deleted.", wrote: true, undo: before.map { .relog($0) })
        case .retype(let id, let typeId): return try await change(id, "Moved.") { $0.eventTypeId = typeId }
        case .editNote(let id, let note):
            return try await change(id, note == nil ? "Note cleared." : "Note saved.") { $0.notes = note }
        case .retime(let id, let when):
            guard let at = time(when) else { return notATime(when) }
            if let now = try await env.store.event(id: id)?.value.timestamp,
                WhenText.typed(now, calendar: ScreenCounts.calendar) == when
            {
                // Enter on the time as shown: its seconds stay.
                return Outcome(message: "The time is as it was.")
            }
            return try await change(id, "Now at \(AppHelp.when(at, .current)).") { $0.timestamp = at }
        case .setValues(let id, let set, let unset):
            guard let event = try await env.store.event(id: id)?.value,
                let type = try await env.store.eventType(id: event.eventTypeId)?.value
            else { return Outcome(message: "That event is gone.", failed: true) }
            let values: [String: PropertyValue]
            do {
                values = try await PropertyActions(env: env).values(
                    set, unset: unset, over: event.properties, of: type, defaults: false)
            } catch let error as ValidationError {
                return Outcome(message: error.issues.map(\.reason).joined(separator: "; "), failed: true)
            } catch let error as PropertyActions.UnknownKey {
                return Outcome(message: error.description, failed: true)
            }
            return try await change(id, "Values saved.") { $0.properties = values }
        case .undo(let undo): return try await self.undo(undo)
        default: return Outcome()
        }
    }

    /// Logs an event of `typeId` at `at` (now when nil); `u` deletes it again.
    /// Logs an event with the properties as typed (`key=value`) and the type's defaults for the
    /// rest; a value that does not fit is the form's refusal, naming the property.
    func log(_ typeId: UUIDv7, at: Date?, note: String?, properties: [String] = []) async throws -> Outcome {
        guard let type = try await env.store.eventType(id: typeId)?.value else {
            return Outcome(message: "That type is gone.", failed: true)
        }
        let values: [String: PropertyValue]
        do {
            values = try await PropertyActions(env: env).values(properties, of: type, defaults: true)
        } catch let error as ValidationError {
            return Outcome(message: error.issues.map(\.reason).joined(separator: "; "), failed: true)
        } catch let error as PropertyActions.UnknownKey {
            return Outcome(message: error.description, failed: true)
        }
        let event = try await EventActions(env: env).log(typeId: typeId, at: at, note: note, properties: values)
        let mark = try await env.store.localChangeMark()
        let name = try await env.store.eventType(id: typeId)?.value.name ?? "an event"
        let when = at.map { " at \(AppHelp.when($0, .current))" } ?? ""
        return Outcome(message: "Logged \(name)\(when).", wrote: true, undo: .unlog(event, mark: mark))
    }

    /// Changes an event; `u` puts back its type, note and time as they were.
    func change(_ id: UUIDv7, _ done: String, _ edit: (inout Event) -> Void) async throws -> Outcome {
        let before = try await env.store.event(id: id)?.value
        guard let after = try await EventActions(env: env).change(id, edit), let before else {
            return Outcome(message: "That event is gone.", failed: true, gone: true)
        }
        let mark = try await env.store.localChangeMark()
        return Outcome(message: done, wrote: true, undo: .revert(before: before, after: after, mark: mark))
    }

    func undo(_ undo: AppUI.Undo) async throws -> Outcome {
        let actions = EventActions(env: env)
        switch undo {
        case .unlog(let logged, let mark):
            guard let now = try await env.store.event(id: logged.id)?.value else {
                return Outcome(message: "That event is gone.")
            }
            guard try await unchanged(now, since: logged, mark) else { return Self.changedSince }
            try await actions.delete(logged.id)
            return Outcome(message: "Took back the log.", wrote: true)
        case .relog(var event):
            // A new id: the server remembers the old one as deleted.
            event.id = env.ids.next()
            try await env.store.createEvent(event)
            await env.sync.localWriteHappened()
            return Outcome(message: "The event is back.", wrote: true)
        case .revert(let before, let after, let mark):
            guard let now = try await env.store.event(id: before.id)?.value else {
                return Outcome(message: "That event is gone.")
            }
            guard try await unchanged(now, since: after, mark) else { return Self.changedSince }
            _ = try await actions.change(before.id) {
                $0.eventTypeId = before.eventTypeId
                $0.notes = before.notes
                $0.timestamp = before.timestamp
                $0.properties = before.properties
            }
            return Outcome(message: "Change taken back.", wrote: true)
        }
    }

    /// Whether the event is as a key left it: no local change of it after `mark` (values put back
    /// by a restore or another terminal count too), and its type, note and time as `left` (a pass
    /// may have brought another device's).
    func unchanged(_ event: Event, since left: Event, _ mark: Int64) async throws -> Bool {
        guard try await !env.store.changedLocally(event.id.description, after: mark) else { return false }
        // The store keeps milliseconds.
        return event.eventTypeId == left.eventTypeId && event.notes == left.notes
            && event.properties == left.properties && abs(event.timestamp.timeIntervalSince(left.timestamp)) < 0.001
    }

    /// An undo that would overwrite a change made since (here, in another terminal, on another device).
    static let changedSince = Outcome(
        message: "Not undone: that event was changed since (here or elsewhere); nothing was overwritten.")

    func time(_ text: String) -> Date? { WhenText.time(text, now: env.now(), calendar: ScreenCounts.calendar) }

    func notATime(_ text: String) -> Outcome {
        Outcome(message: "“\(text)” is not a time: try now, -2h, yesterday 18:00 or 2026-11-20 09:00.", failed: true)
    }

    /// Where the list stands at the first event on or before the day `text` names.
    func jump(_ text: String, filter: UUIDv7?) async throws -> Outcome {
        let calendar = ScreenCounts.calendar
        guard let day = WhenText.day(text, now: env.now(), calendar: calendar),
            let next = calendar.date(byAdding: .day, value: 1, to: day)
        else {
            return Outcome(message: "“\(text)” is not a day: try 2026-11-20, yesterday or -7d.", failed: true)
        }
        let newer: Int
        let total: Int
        if let filter {
            newer = try await env.store.eventCountsByType(from: next, to: .distantFuture)[filter] ?? 0
            total = try await env.store.eventCountsByType(from: .distantPast, to: .distantFuture)[filter] ?? 0
        } else {
            newer = try await env.store.eventCount(from: next, to: .distantFuture)
            total = try await env.store.eventCount(from: .distantPast, to: .distantFuture)
        }
        guard newer < total else {
            return Outcome(
                message: "Nothing on or before \(AppHelp.day(day)): the oldest events.", position: max(0, total - 1))
        }
        return Outcome(message: "From \(AppHelp.day(day)) back.", position: newer)
    }
}
