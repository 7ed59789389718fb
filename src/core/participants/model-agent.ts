/**
 * {@link ModelAgent}: the agent under test as a model behind a {@link ModelClient}.
 */
import { DEFAULT_SAMPLING, type ModelClient, type ModelRequest, type SamplingParams } from '../ports/model-client.ts';
import { AGENT_PROMPT_VERSION, referenceGuidance, renderAgentPrompt } from '../prompts/agent.ts';
import type { Task } from '../schema/task.ts';
import type { ParticipantCard, ToolCall, Trajectory } from '../schema/trajectory.ts';
import {
  agentMessages,
  episodeCallIds,
  generationOf,
  participantCard,
  recordRequest,
  type TurnAudio,
} from './model-messages.ts';
import { replyToolCalls } from './model-tool-calls.ts';
import type { Agent, EpisodeView, ParticipantReply } from './types.ts';
import { TeacherGuidanceError } from '../errors.ts';

/** Options of {@link ModelAgent}. */
export interface ModelAgentOptions {
  /** Sampling; `seed` is replaced by the rollout's seed when the episode gives one. Default {@link DEFAULT_SAMPLING}. */
  sampling?: Partial<SamplingParams>;
  /**
   * Teacher-only guidance for producing SFT demonstrations: `reference` (the task's reference
   * solution and facts to tell, see `referenceGuidance`) or a function of the task. Trajectories
   * made with it carry `teacher_guidance: true` and the text in `participants.agent_card`.
   */
  teacherGuidance?: 'reference' | ((task: Task) => string);
  /** Ask for spoken audio in this voice (omni models). */
  voice?: string;
  /** Stream replies (SSE). */
  stream?: boolean;
  /** Caller audio (base64 WAV) for a caller turn, sent instead of its text (S2T / omni agents). */
  userAudio?: TurnAudio;
}

/**
 * An agent backed by a model. Each turn it sends the system prompt ({@link renderAgentPrompt}:
 * policy, tool schemas, voice-call style, optional teacher guidance) and the conversation so far
 * ({@link agentMessages}) with the agent's tools and explicit sampling, and returns the reply's
 * text, tool calls (server-parsed or `<tool_call>` text, validated by the episode loop), spoken
 * audio and generation record (token ids, logprobs).
 *
 * Stateless between turns except for the guidance text of the task it is running (one instance
 * per rollout, as `runBatch` does).
 *
 * @throws ModelEndpointError (an InfrastructureError) from the client when the endpoint fails.
 */
export class ModelAgent implements Agent {
  readonly id: string;
  private readonly sampling: SamplingParams;
  private guidance: string | null = null;

  constructor(
    private readonly client: ModelClient,
    private readonly options: ModelAgentOptions = {},
  ) {
    this.id = client.id;
    this.sampling = { ...DEFAULT_SAMPLING, ...options.sampling };
  }

  /** Setup recorded in the trajectory. `teacher_guidance` is the text used for the task run last. */
  get card(): ParticipantCard {
    return participantCard(
      this.client,
      this.sampling,
      AGENT_PROMPT_VERSION,
      this.options.teacherGuidance ? this.guidance : null,
    );
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const g = this.options.teacherGuidance;
    this.guidance = g === undefined ? null : g === 'reference' ? referenceGuidance(view.task) : g(view.task);
    const system = renderAgentPrompt({
      domain: view.domain,
      task: view.task,
      tools: view.tools,
      guidance: this.guidance,
    });
    const request: ModelRequest = {
      messages: agentMessages(system, view.turns, this.options.userAudio),
      ...(view.tools.length ? { tools: view.tools } : {}),
      sampling: { ...this.sampling, seed: view.seed ?? this.sampling.seed },
      language: view.domain.language,
      ...(this.options.voice ? { audio: { voice: this.options.voice } } : {}),
      ...(this.options.stream ? { stream: true } : {}),
    };
    const res = await this.client.complete(request);
    const calls = replyToolCalls(episodeCallIds(res, view.turns.length));
    return {
      text: res.text,
      // Arguments may be a string or a non-object here: the episode loop refuses such calls
      // with an `Error: …` tool message (normalizeReply).
      tool_calls: calls as ToolCall[],
      ...(res.audio
        ? {
            parts: [
              {
                type: 'audio' as const,
                base64: res.audio.base64,
                ...(res.audio.transcript ? { transcript: res.audio.transcript } : {}),
              },
            ],
          }
        : {}),
      generation: generationOf(res),
      request: recordRequest(request),
    };
  }
}

export { TeacherGuidanceError };

/**
 * For evaluation and GRPO: refuse trajectories whose agent had teacher-only guidance.
 * @throws TeacherGuidanceError naming the first such trajectory.
 */
export function refuseTeacherGuided(trajectories: readonly Pick<Trajectory, 'id' | 'teacher_guidance'>[]): void {
  const bad = trajectories.find((t) => t.teacher_guidance === true);
  if (bad)
    throw new TeacherGuidanceError(
      `trajectory ${bad.id} was made with teacher guidance: usable as a demonstration, not for evaluation`,
    );
}
