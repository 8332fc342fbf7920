import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { quote } from '../../core/one-line.js';
import type { CliIO } from '../io.js';

/** `joulebench setup llamacpp [--gpu cuda|vulkan]`: adds a prebuilt llama.cpp build beside node-llama-cpp. */
export function setupCommand(io: CliIO): Command {
  return new Command('setup')
    .description("add what an optional part needs (llamacpp: node-llama-cpp's prebuilt llama.cpp for this platform, or with --gpu its CUDA or Vulkan build)")
    .argument('<part>', 'llamacpp')
    .option('--gpu <kind>', 'cuda or vulkan: the GPU build (Linux and Windows x64); without it, the CPU build for this platform')
    .action(async (part: string, flags: { gpu?: string }) => {
      if (part !== 'llamacpp') throw new JoulebenchError('E_USAGE', `setup: unknown part ${quote(part)} (known: llamacpp)`);
      const { SETUP_GPUS, setupLlamaCpp } = await import('../../targets/llamacpp/setup.js');
      const gpu = flags.gpu;
      if (gpu !== undefined && !(SETUP_GPUS as readonly string[]).includes(gpu)) {
        throw new JoulebenchError('E_USAGE', `setup llamacpp: --gpu ${quote(gpu)} is not one of ${SETUP_GPUS.join(', ')}`);
      }
      const results = await setupLlamaCpp((gpu as (typeof SETUP_GPUS)[number] | undefined) ?? false, { log: (l) => io.err(`${l}\n`) });
      for (const r of results) io.err(`${r.installed ? 'installed' : 'already installed:'} ${r.package} in ${r.dir}\n`);
      io.err(gpu === undefined ? 'the llamacpp target can load it now\n' : `the llamacpp target uses it with --gpu-layers N (N > 0); npm ci removes it again\n`);
    });
}
