import type { BuildOptions } from "esbuild";

export declare const externals: string[];
export declare function buildOptions(production: boolean): BuildOptions;
