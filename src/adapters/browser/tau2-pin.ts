/**
 * The tau2-bench data the page downloads: sierra-research/tau2-bench at commit
 * `a2c024725189473d2d7cea3a5cfdbcc67478e41f` (MIT), folder `data/tau2/domains/<name>/`, each
 * file with its sha256 and size in bytes.
 */
import type { Tau2DataPin } from './tau2-download.ts';

/** The pinned tau2-bench data of the page. */
export const TAU2_PIN: Tau2DataPin = {
  repo: 'sierra-research/tau2-bench',
  commit: 'a2c024725189473d2d7cea3a5cfdbcc67478e41f',
  domains: {
    airline: {
      'db.json': { sha256: 'a663f70087f3b2e810933afb48584ae413c7713da9c52362ecb222d78a6b6ff2', bytes: 3069655 },
      'policy.md': { sha256: '10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4', bytes: 7676 },
      'split_tasks.json': { sha256: 'b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b', bytes: 1443 },
      'tasks.json': { sha256: 'ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052', bytes: 155528 },
    },
    retail: {
      'db.json': { sha256: '413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765', bytes: 2811616 },
      'policy.md': { sha256: '2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467', bytes: 6699 },
      'split_tasks.json': { sha256: 'ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20', bytes: 3263 },
      'tasks.json': { sha256: '8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8', bytes: 345982 },
    },
  },
};
