#!/bin/bash
#SBATCH -J vit-l
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=16

module load cuda/12.1
source ~/envs/vision/bin/activate
srun python train_vit_pl.py --model vit_large_patch16_224 --nodes $SLURM_NNODES --gpus 4 --batch_size 64 --epochs 90
