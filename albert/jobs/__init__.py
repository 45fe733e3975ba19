"""The jobs' old addresses: `albert.jobs.glue`, `.squad`, `.race` and `.pretraining` are doors to each task's job
(albert.tasks.<task>.job: train, evaluate every checkpoint, keep the best, predict, export), kept so that
`albert.jobs.glue.run(settings, runtime)` works as documented before the tasks got a package each."""
