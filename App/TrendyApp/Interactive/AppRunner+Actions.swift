import Foundation
import Logging
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

extension AppRunner {
    func enterBackground(reason: String, phase: inout Phase) async {
        log.info("Scene phase", metadata: ["phase": "background", "reason": .string(reason)])
        phase = .background
        for module in env.modules.reversed() { await module.didEnterBackground() }
        env.logs.flush()
    }

    func enterForeground(phase: inout Phase) async {
        phase = .foreground
        log.info("Scene phase", metadata: ["phase": "foreground"])
        for module in env.modules { await module.willEnterForeground() }
    }

    /// Does what a key asked; returns whether it wrote locally (a sync should follow).
    func perform(_ command: AppUI.Command, ui: inout AppUI, route: AppRoute, sink: AsyncStream<Input>.Continuation?)
        async -> Bool
    {
        do {
            switch command {
            case .quit, .redraw, .syncNow: return false
            case .log(let typeId):
                try await env.store.createEvent(Event(id: env.ids.next(), eventTypeId: typeId, timestamp: env.now()))
                ui.message = "Logged \(try await env.store.eventType(id: typeId)?.value.name ?? "an event")."
                await env.sync.localWriteHappened()
                return true
            case .delete(let id):
                try await env.store.deleteEvent(id: id)
                ui.message = "Deleted."
                ui.selection = max(0, ui.selection - 1)
                return true
            case .retype(let id, let typeId):
                guard var event = try await env.store.event(id: id)?.value else { return false }
                event.eventTypeId = typeId
                try await env.store.updateEvent(event)
                ui.message = "Moved."
                return true
            case .editNote(let id, let note):
                guard var event = try await env.store.event(id: id)?.value else { return false }
                event.notes = note
                try await env.store.updateEvent(event)
                ui.message = note == nil ? "Note cleared." : "Note saved."
                return true
            case .signIn(let email, let password), .signUp(let email, let password):
                let session: AuthSession
                do throws(AuthError) {
                    if case .signUp = command {
                        session = try await env.auth.signUp(email: email, password: password)
                    } else {
                        session = try await env.auth.signIn(email: email, password: password)
                    }
                } catch {
                    ui.message = error.description
                    return false
                }
                try await claimLocalData(env, for: session)
                ui.message = "Signed in as \(session.user.email)."
                return false
            case .onboardingNext, .onboardingBack, .onboardingSkip, .firstType, .firstEvent, .permissions:
                try await onboarding(command)
                return command != .onboardingBack
            }
        } catch let error as CLIError {
            ui.message = error.message
        } catch let error as LocalStoreError {
            ui.message = error.description
        } catch {
            ui.message = String(describing: error)
        }
        return false
    }

    /// Runs one onboarding step and tells routing where the person now stands.
    func onboarding(_ command: AppUI.Command) async throws {
        let steps = try env.onboardingSteps()
        let position: OnboardingPosition
        let none = CLIPermissionPrompter(answers: [:], interactive: false)
        switch command {
        case .onboardingBack: position = try await steps.backStep()
        case .onboardingSkip: position = try await steps.skipStep()
        case .firstType(let name): position = try await steps.nextStep(typeName: name, logType: nil, prompter: none)
        case .firstEvent(let type): position = try await steps.nextStep(typeName: nil, logType: type, prompter: none)
        case .permissions(let allow):
            let answer: PermissionAnswer = allow ? .allow : .skip
            let person = CLIPermissionPrompter(
                answers: Dictionary(uniqueKeysWithValues: PermissionKind.allCases.map { ($0, answer) }),
                interactive: false)
            position = try await steps.nextStep(typeName: nil, logType: nil, prompter: env.permissionPrompter(person))
        default: position = try await steps.nextStep(typeName: nil, logType: nil, prompter: none)
        }
        switch position {
        case .completed: env.routing.send(.onboardingCompleted)
        case .step(_, let step), .signedOut(let step): env.routing.send(.onboardingStepChanged(step))
        }
    }
}
