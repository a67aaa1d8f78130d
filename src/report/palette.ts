/**
 * Colour through kleur, decided per output stream: stderr may be a terminal while stdout is a
 * pipe, or the other way round. kleur's own switch is global, so a {@link Palette} turns it on
 * only for the duration of each call it makes.
 */
import kleur from 'kleur';

/** Colours one piece of text. */
export type Paint = (text: string) => string;

/** The styles reclazz-build uses. */
export interface Palette {
  readonly enabled: boolean;
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  magenta: Paint;
  cyan: Paint;
  white: Paint;
  /** Bold and coloured, for verdict marks. */
  boldGreen: Paint;
  boldYellow: Paint;
  boldRed: Paint;
}

/**
 * True when colour should be used on `stream`: NO_COLOR (non-empty) turns it off, FORCE_COLOR
 * turns it on (unless `0` or `false`), TERM=dumb turns it off, else the stream's own terminal
 * status decides.
 */
function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** A palette that colours when `enabled`, else returns text unchanged. */
export function palette(enabled: boolean): Palette {
  const style = (apply: (text: string) => string): Paint => {
    if (!enabled) return (text) => text;
    return (text) => {
      const was = kleur.enabled;
      kleur.enabled = true;
      try {
        return apply(text);
      } finally {
        kleur.enabled = was;
      }
    };
  };
  return {
    enabled,
    bold: style((t) => kleur.bold(t)),
    dim: style((t) => kleur.dim(t)),
    red: style((t) => kleur.red(t)),
    green: style((t) => kleur.green(t)),
    yellow: style((t) => kleur.yellow(t)),
    magenta: style((t) => kleur.magenta(t)),
    cyan: style((t) => kleur.cyan(t)),
    white: style((t) => kleur.white(t)),
    boldGreen: style((t) => kleur.green().bold(t)),
    boldYellow: style((t) => kleur.yellow().bold(t)),
    boldRed: style((t) => kleur.red().bold(t)),
  };
}

/** The palette for a stream in this environment. */
export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Palette {
  return palette(wantsColor(stream, env));
}

/** Colour per agent event level: the agent's reloads green, structural magenta, compile cyan, warnings yellow, errors red. */
export function levelColour(p: Palette, level: string): Paint {
  switch (level) {
    case 'RELOAD':
    case 'OK':
      return p.green;
    case 'STRUCTURAL_RELOAD':
      return p.magenta;
    case 'COMPILE':
      return p.cyan;
    case 'WARN':
      return p.yellow;
    case 'ERROR':
      return p.red;
    case 'HEARTBEAT':
      return p.dim;
    default:
      return p.white;
  }
}
